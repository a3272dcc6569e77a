/**
 * numpy arrays as they cross the wire: raw C-order bytes, a numpy dtype string and a shape. The
 * three protocols wrap this triple differently (openpi: bin-keyed msgpack map; vla-eval: str-keyed
 * map; OpenVLA: json-numpy with base64), so the triple and its checks live here once.
 */
import { ProvaelError } from "../../../core/errors.js";

/** An n-dimensional array: `data` holds the element bytes in C order, as `dtype` says. */
export class NdArray {
  constructor(
    readonly dtype: string,
    readonly shape: readonly number[],
    readonly data: Uint8Array,
  ) {}

  get size(): number {
    return this.shape.reduce((a, b) => a * b, 1);
  }
}

export interface Dtype {
  /** numpy kind: float, signed int, unsigned int, bool. */
  kind: "f" | "i" | "u" | "b";
  /** Bytes per element. */
  size: number;
  littleEndian: boolean;
}

/** The dtype kinds and sizes we read; anything else (object, void, complex, text) is refused. */
const SIZES: Record<Dtype["kind"], number[]> = {
  f: [2, 4, 8],
  i: [1, 2, 4, 8],
  u: [1, 2, 4, 8],
  b: [1],
};

function protocolError(message: string, details: Record<string, unknown> = {}): ProvaelError {
  return new ProvaelError("policy/protocol", message, {
    details,
    hint: "the peer sent an array this client does not accept; check the server's protocol and version",
  });
}

/**
 * Parses a numpy dtype string (`<f4`, `>f8`, `|u1`, `|b1`, `=i8`).
 *
 * @example
 *   parseDtype("<f4"); // { kind: "f", size: 4, littleEndian: true }
 */
export function parseDtype(s: string): Dtype {
  const m = /^([<>|=]?)([fiub])(\d+)$/.exec(s);
  if (!m)
    throw protocolError(`unsupported numpy dtype '${s}' (accepted: float, int, uint, bool)`, {
      dtype: s,
    });
  const kind = m[2] as Dtype["kind"];
  const size = Number(m[3]);
  if (!SIZES[kind].includes(size))
    throw protocolError(`unsupported numpy dtype '${s}'`, { dtype: s });
  // '=' and '|' mean native order; every host we run on is little-endian.
  return { kind, size, littleEndian: m[1] !== ">" };
}

/** Checks shape entries and that the bytes match the dtype and shape. */
export function validateNdArray(a: NdArray): Dtype {
  const dt = parseDtype(a.dtype);
  for (const d of a.shape) {
    if (!Number.isSafeInteger(d) || d < 0)
      throw protocolError(`array shape [${a.shape.join(", ")}] has an invalid dimension`, {
        shape: a.shape,
      });
  }
  if (a.shape.length > 8) throw protocolError(`array has ${a.shape.length} dimensions (at most 8)`);
  const want = a.size * dt.size;
  if (a.data.length !== want) {
    throw protocolError(
      `array of dtype ${a.dtype} and shape [${a.shape.join(", ")}] needs ${want} bytes, got ${a.data.length}`,
      { dtype: a.dtype, shape: a.shape, bytes: a.data.length },
    );
  }
  return dt;
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * 2 ** -14 * (frac / 1024);
  if (exp === 31) return frac ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * 2 ** (exp - 15) * (1 + frac / 1024);
}

/** The elements as float64 numbers, whatever numeric dtype and byte order they came in. */
export function toFloat64(a: NdArray): Float64Array {
  const dt = validateNdArray(a);
  const n = a.size;
  const out = new Float64Array(n);
  const v = new DataView(a.data.buffer, a.data.byteOffset, a.data.byteLength);
  const le = dt.littleEndian;
  for (let i = 0; i < n; i++) {
    const o = i * dt.size;
    switch (`${dt.kind}${dt.size}`) {
      case "f2":
        out[i] = halfToFloat(v.getUint16(o, le));
        break;
      case "f4":
        out[i] = v.getFloat32(o, le);
        break;
      case "f8":
        out[i] = v.getFloat64(o, le);
        break;
      case "i1":
        out[i] = v.getInt8(o);
        break;
      case "i2":
        out[i] = v.getInt16(o, le);
        break;
      case "i4":
        out[i] = v.getInt32(o, le);
        break;
      case "i8":
        out[i] = Number(v.getBigInt64(o, le));
        break;
      case "u1":
      case "b1":
        out[i] = v.getUint8(o);
        break;
      case "u2":
        out[i] = v.getUint16(o, le);
        break;
      case "u4":
        out[i] = v.getUint32(o, le);
        break;
      case "u8":
        out[i] = Number(v.getBigUint64(o, le));
        break;
    }
  }
  return out;
}

/** The elements of a `uint8` array (any other dtype is an error naming `what`). */
export function toUint8(a: NdArray, what: string): Uint8Array {
  validateNdArray(a);
  if (
    a.dtype !== "|u1" &&
    a.dtype !== "<u1" &&
    a.dtype !== ">u1" &&
    a.dtype !== "=u1" &&
    a.dtype !== "u1"
  )
    throw protocolError(`${what} must be uint8 (|u1), got dtype '${a.dtype}'`, { dtype: a.dtype });
  return a.data;
}

function bytesOf(t: ArrayBufferView): Uint8Array {
  return new Uint8Array(t.buffer, t.byteOffset, t.byteLength).slice();
}

/** A little-endian float32 array (`<f4`). */
export function float32Array(values: ArrayLike<number>, shape: readonly number[]): NdArray {
  return new NdArray("<f4", shape, bytesOf(Float32Array.from(values)));
}

/** A little-endian float64 array (`<f8`). */
export function float64Array(values: ArrayLike<number>, shape: readonly number[]): NdArray {
  return new NdArray("<f8", shape, bytesOf(Float64Array.from(values)));
}

/** A uint8 array (`|u1`); the bytes are used as they are, not copied. */
export function uint8Array(values: Uint8Array, shape: readonly number[]): NdArray {
  return new NdArray("|u1", shape, values);
}

/** Throws unless the array holds floats (any size and byte order). */
export function expectFloat(a: NdArray, what: string): Dtype {
  const dt = validateNdArray(a);
  if (dt.kind !== "f")
    throw protocolError(`${what} must be a float array, got dtype '${a.dtype}'`, {
      dtype: a.dtype,
    });
  return dt;
}
