/**
 * json-numpy (PROTOCOLS.md §3), the encoding of OpenVLA's `POST /act`: an array is the JSON object
 * `{"__numpy__": <base64 of C-order bytes>, "dtype": "<f8", "shape": [..]}`; shape `[]` is a
 * numpy scalar and decodes to its one element. Plain objects pass through.
 */
import { ProvaelError } from "../../../core/errors.js";
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

function fromJson(v: unknown, depth: number): WireValue {
  if (depth > 64) throw malformed("nested more than 64 levels deep");
  if (v === null || typeof v === "boolean" || typeof v === "number" || typeof v === "string")
    return v;
  if (Array.isArray(v)) return v.map((x) => fromJson(x, depth + 1));
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
    const a = new NdArray(dtype, shape as number[], new Uint8Array(Buffer.from(b64, "base64")));
    validateNdArray(a);
    // json-numpy returns element 0 for a 0-d array: a numpy scalar.
    return shape.length === 0 ? (toFloat64(a)[0] as number) : a;
  }
  const m: WireMap = wireMap();
  for (const [k, x] of Object.entries(o)) m[k] = fromJson(x, depth + 1);
  return m;
}

/** Parses json-numpy text; throws `policy/protocol` on anything that is not valid JSON. */
export function decodeJsonNumpy(text: string): WireValue {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw malformed(`not JSON (${(e as Error).message})`);
  }
  return fromJson(parsed, 0);
}
