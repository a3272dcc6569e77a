/**
 * json-numpy (PROTOCOLS.md §3), the encoding of OpenVLA's `POST /act`: an array is the JSON object
 * `{"__numpy__": <base64 of C-order bytes>, "dtype": "<f8", "shape": [..]}`; shape `[]` is a
 * numpy scalar and decodes to its one element. Plain objects pass through.
 */
import { ProvaelError } from "../../../core/errors.js";
import { COST, DEFAULT_DECODE_LIMITS, DecodeBudget, type DecodeLimits } from "./limits.js";
import { NdArray, toFloat64, validateNdArray } from "./ndarray.js";
import { isWireMap, type WireMap, type WireValue, wireMap } from "./tree.js";

function toJson(v: WireValue): unknown {
  if (v instanceof NdArray) {
    validateNdArray(v);
    return {
      __numpy__: Buffer.from(v.data.buffer, v.data.byteOffset, v.data.byteLength).toString(
        "base64",
      ),
      dtype: v.dtype,
      shape: [...v.shape],
    };
  }
  if (v instanceof Uint8Array)
    throw new ProvaelError("internal/unserialisable", "raw bytes have no JSON form");
  if (typeof v === "bigint") return Number(v);
  if (Array.isArray(v)) return v.map(toJson);
  if (isWireMap(v)) {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) o[k] = toJson(x);
    return o;
  }
  return v;
}

/**
 * A tree as json-numpy text.
 *
 * @example
 *   encodeJsonNumpy(float64Array([0.1, 0, 0, 0, 0, 0, 1], [7]));
 */
export function encodeJsonNumpy(value: WireValue): string {
  return JSON.stringify(toJson(value));
}

function malformed(message: string): ProvaelError {
  return new ProvaelError("policy/protocol", `malformed json-numpy: ${message}`, {
    hint: 'arrays are {"__numpy__": base64, "dtype": "<f8", "shape": [..]}',
  });
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Charges `budget` for what `JSON.parse(text)` would build, before it runs: JSON.parse cannot be
 * stopped half-way, and 57 MB of `[{},{},…]` is 19 million objects. A linear pass over the
 * structural characters outside strings: each `,` and `:` starts a value, each `{` or `[` is a
 * container one level deeper; string characters are charged as copied text. It stops at the
 * first bound passed, so a hostile body costs a scan of its first few hundred kilobytes. Invalid
 * JSON is left for JSON.parse to refuse.
 */
export function chargeJson(text: string, budget: DecodeBudget): void {
  let elements = 1;
  let bytes = 0;
  let depth = 0;
  // Charge in slices so an over-bound body stops early rather than after a full pass.
  const flush = () => {
    budget.take(elements, bytes);
    elements = 0;
    bytes = 0;
  };
  for (let i = 0, n = text.length; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Jump to the closing quote: one not preceded by an odd run of backslashes.
      let j = i;
      for (;;) {
        j = text.indexOf('"', j + 1);
        if (j < 0) {
          j = n;
          break;
        }
        let k = j - 1;
        while (text.charCodeAt(k) === BACKSLASH) k--;
        if ((j - 1 - k) % 2 === 0) break;
      }
      bytes += COST.container + (j - i) * COST.stringPerByte;
      i = j;
    } else if (c === 0x2c) {
      elements += 1;
      bytes += COST.slot;
    } else if (c === 0x3a) {
      elements += 1;
      bytes += COST.mapEntry;
    } else if (c === 0x7b || c === 0x5b) {
      depth += 1;
      budget.depth(depth);
      elements += 1;
      bytes += COST.container;
    } else if (c === 0x7d || c === 0x5d) depth -= 1;
    if (elements >= 4096) flush();
  }
  flush();
}

function fromJson(v: unknown, depth: number, budget: DecodeBudget): WireValue {
  budget.depth(depth);
  if (v === null || typeof v === "boolean" || typeof v === "number" || typeof v === "string")
    return v;
  if (Array.isArray(v)) return v.map((x) => fromJson(x, depth + 1, budget));
  if (typeof v !== "object") throw malformed(`unexpected ${typeof v}`);
  const o = v as Record<string, unknown>;
  if (Object.hasOwn(o, "__numpy__")) {
    const { __numpy__: b64, dtype, shape } = o;
    // A full character check costs more than the decode; the byte count check below catches junk.
    if (typeof b64 !== "string" || b64.length % 4 !== 0)
      throw malformed("'__numpy__' is not base64 text");
    if (typeof dtype !== "string") throw malformed("'dtype' is not a string");
    if (!Array.isArray(shape) || !shape.every((d) => typeof d === "number"))
      throw malformed("'shape' is not a list of ints");
    // The decoded bytes, a copy, are paid for before base64 is decoded.
    budget.take(0, (b64.length / 4) * 3);
    const a = new NdArray(dtype, shape as number[], new Uint8Array(Buffer.from(b64, "base64")));
    validateNdArray(a);
    // json-numpy returns element 0 for a 0-d array: a numpy scalar.
    return shape.length === 0 ? (toFloat64(a)[0] as number) : a;
  }
  const m: WireMap = wireMap();
  for (const [k, x] of Object.entries(o)) m[k] = fromJson(x, depth + 1, budget);
  return m;
}

/**
 * Parses json-numpy text within `limits` (limits.ts, checked before JSON.parse runs); throws
 * `policy/protocol` on anything that is not valid JSON or passes a bound.
 */
export function decodeJsonNumpy(
  text: string,
  limits: DecodeLimits = DEFAULT_DECODE_LIMITS,
): WireValue {
  const budget = new DecodeBudget(limits, "json-numpy");
  chargeJson(text, budget);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw malformed(`not JSON (${(e as Error).message})`);
  }
  return fromJson(parsed, 0, budget);
}
