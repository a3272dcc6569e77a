/**
 * openpi's frame encoding (PROTOCOLS.md §1.3): msgpack maps with str keys, where arrays are maps
 * whose keys are msgpack **bin**: `__ndarray__`, `data`, `dtype`, `shape` (in that order), and
 * numpy scalars are `__npgeneric__` maps. A str-keyed look-alike is not an array.
 */
import { ProvaelError } from "../../../core/errors.js";
import { DEFAULT_DECODE_LIMITS, type DecodeLimits } from "./limits.js";
import {
  decodeMsgpack,
  type Encodable,
  encodeMsgpack,
  MsgFloat,
  MsgMap,
  type MsgValue,
} from "./msgpack.js";
import { NdArray, validateNdArray } from "./ndarray.js";
import { isWireMap, type WireMap, type WireValue, wireMap } from "./tree.js";

const enc = new TextEncoder();
const K_NDARRAY = enc.encode("__ndarray__");
const K_NPGENERIC = enc.encode("__npgeneric__");
const K_DATA = enc.encode("data");
const K_DTYPE = enc.encode("dtype");
const K_SHAPE = enc.encode("shape");

/** The msgpack form of one array, keys as bin in the order openpi writes them. */
function packArray(a: NdArray): Map<Uint8Array, Encodable> {
  validateNdArray(a);
  return new Map<Uint8Array, Encodable>([
    [K_NDARRAY, true],
    [K_DATA, a.data],
    [K_DTYPE, a.dtype],
    [K_SHAPE, [...a.shape]],
  ]);
}

function toEncodable(v: WireValue): Encodable {
  if (v instanceof NdArray) return packArray(v);
  if (Array.isArray(v)) return v.map(toEncodable);
  if (isWireMap(v)) {
    const m = new Map<string, Encodable>();
    for (const [k, x] of Object.entries(v)) m.set(k, toEncodable(x));
    return m;
  }
  return v;
}

/**
 * Encodes a tree as one openpi frame.
 *
 * @example
 *   encodeOpenpi({ actions: float32Array([1, 2], [2]) });
 */
export function encodeOpenpi(value: WireValue): Uint8Array {
  return encodeMsgpack(toEncodable(value));
}

function malformed(what: string): ProvaelError {
  return new ProvaelError("policy/protocol", `malformed openpi ${what}`, {
    hint: "arrays need bin keys __ndarray__, data (bin), dtype (str) and shape (list of ints)",
  });
}

function fromMsg(v: MsgValue, depth: number): WireValue {
  if (!(v instanceof MsgMap)) {
    if (Array.isArray(v)) return v.map((x) => fromMsg(x, depth + 1));
    return v;
  }
  if (v.getBin("__ndarray__") !== undefined) {
    const data = v.getBin("data");
    const dtype = v.getBin("dtype");
    const shape = v.getBin("shape");
    if (!(data instanceof Uint8Array)) throw malformed("array: 'data' is not bin");
    if (typeof dtype !== "string") throw malformed("array: 'dtype' is not a str");
    if (!Array.isArray(shape) || !shape.every((d) => typeof d === "number"))
      throw malformed("array: 'shape' is not a list of ints");
    const a = new NdArray(dtype, shape as number[], data);
    validateNdArray(a);
    return a;
  }
  if (v.getBin("__npgeneric__") !== undefined) {
    const data = v.getBin("data");
    if (typeof v.getBin("dtype") !== "string")
      throw malformed("numpy scalar: 'dtype' is not a str");
    if (typeof data !== "number" && typeof data !== "boolean" && typeof data !== "bigint")
      throw malformed("numpy scalar: 'data' is not a number or bool");
    return data;
  }
  const out: WireMap = wireMap();
  for (const [k, x] of v.entries) {
    // Keys are str by convention; bin keys of plain maps are read as UTF-8 like DROID's prompt.
    const key =
      typeof k === "string"
        ? k
        : k instanceof Uint8Array
          ? new TextDecoder().decode(k)
          : typeof k === "number" || typeof k === "bigint"
            ? String(k)
            : null;
    if (key === null) throw malformed("map: a key is neither str, bin nor int");
    out[key] = fromMsg(x, depth + 1);
  }
  return out;
}

/**
 * Decodes one openpi frame into a tree (arrays become NdArray, numpy scalars plain numbers),
 * within `limits` (limits.ts); array data stays a view on `bytes`.
 */
export function decodeOpenpi(
  bytes: Uint8Array,
  limits: DecodeLimits = DEFAULT_DECODE_LIMITS,
): WireValue {
  return fromMsg(decodeMsgpack(bytes, limits), 0);
}

/** A numpy scalar map (`np.float32(x)` and the like), for peers that send them. */
export function npScalar(value: number | boolean, dtype: string): Map<Uint8Array, Encodable> {
  return new Map<Uint8Array, Encodable>([
    [K_NPGENERIC, true],
    // .item() of a float dtype is a Python float: keep it float64 even when integral.
    [K_DATA, typeof value === "number" && dtype.includes("f") ? new MsgFloat(value) : value],
    [K_DTYPE, dtype],
  ]);
}
