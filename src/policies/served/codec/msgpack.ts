/**
 * A small msgpack encoder and decoder, written for the serving protocols (PROTOCOLS.md §1.3, §4.2).
 * We own it rather than configure a library so that the bytes are fixed by this file: map keys may
 * be `str` or `bin` (openpi's ndarray markers are bin), floats are always float64 like
 * msgpack-python's, ext types are refused, and a hostile frame cannot make us allocate more than
 * its decode budget allows (limits.ts): a container's declared length is charged when its header
 * is read, before anything is allocated for it. docs/adr/0004-msgpack.md says why not msgpackr.
 */
import { ProvaelError } from "../../../core/errors.js";
import { COST, DEFAULT_DECODE_LIMITS, DecodeBudget, type DecodeLimits } from "./limits.js";

/** A decoded msgpack map, keys kept as they came (`str` as string, `bin` as bytes), in order. */
export class MsgMap {
  constructor(readonly entries: Array<[MsgValue, MsgValue]>) {}

  /** The value under a `str` key. */
  get(key: string): MsgValue | undefined {
    for (const [k, v] of this.entries) if (k === key) return v;
    return undefined;
  }

  /** The value under a `bin` key holding these UTF-8 bytes. */
  getBin(key: string): MsgValue | undefined {
    const want = Buffer.from(key, "utf8");
    for (const [k, v] of this.entries)
      if (k instanceof Uint8Array && Buffer.compare(Buffer.from(k), want) === 0) return v;
    return undefined;
  }
}

export type MsgValue = null | boolean | number | bigint | string | Uint8Array | MsgValue[] | MsgMap;

/** Forces a number to be written as float64 even when it is integral (timestamps). */
export class MsgFloat {
  constructor(readonly value: number) {}
}

/**
 * What the encoder accepts: plain objects become maps with `str` keys; a `Map` may also have
 * `Uint8Array` keys, written as `bin`; `Uint8Array` values are written as `bin`.
 */
export type Encodable =
  | null
  | undefined
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | MsgFloat
  | readonly Encodable[]
  | ReadonlyMap<string | Uint8Array | number, Encodable>
  | { readonly [key: string]: Encodable };

const utf8 = new TextEncoder();
const utf8Strict = new TextDecoder("utf-8", { fatal: true });

/** Large binaries are kept by reference and joined once at the end (images are 150 KB each). */
const BIG = 1024;

class Writer {
  private buf = new Uint8Array(256);
  private view = new DataView(this.buf.buffer);
  private readonly chunks: Uint8Array[] = [];
  private size = 0;
  length = 0;

  private ensure(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  u8(v: number): void {
    this.ensure(1);
    this.buf[this.length++] = v;
  }
  u16(v: number): void {
    this.ensure(2);
    this.view.setUint16(this.length, v);
    this.length += 2;
  }
  u32(v: number): void {
    this.ensure(4);
    this.view.setUint32(this.length, v);
    this.length += 4;
  }
  u64(v: bigint): void {
    this.ensure(8);
    this.view.setBigUint64(this.length, v);
    this.length += 8;
  }
  i64(v: bigint): void {
    this.ensure(8);
    this.view.setBigInt64(this.length, v);
    this.length += 8;
  }
  f64(v: number): void {
    this.ensure(8);
    this.view.setFloat64(this.length, v);
    this.length += 8;
  }
  bytes(b: Uint8Array): void {
    if (b.length >= BIG) {
      this.flush();
      this.chunks.push(b);
      this.size += b.length;
      return;
    }
    this.ensure(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }
  private flush(): void {
    if (this.length === 0) return;
    this.chunks.push(this.buf.slice(0, this.length));
    this.size += this.length;
    this.length = 0;
  }
  result(): Uint8Array {
    this.flush();
    if (this.chunks.length === 1) return this.chunks[0] as Uint8Array;
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}

function writeInt(w: Writer, v: bigint): void {
  if (v >= 0n) {
    if (v < 128n) w.u8(Number(v));
    else if (v < 0x100n) {
      w.u8(0xcc);
      w.u8(Number(v));
    } else if (v < 0x10000n) {
      w.u8(0xcd);
      w.u16(Number(v));
    } else if (v < 0x100000000n) {
      w.u8(0xce);
      w.u32(Number(v));
    } else if (v < 0x10000000000000000n) {
      w.u8(0xcf);
      w.u64(v);
    } else throw encodeError(`integer ${v} does not fit in 64 bits`);
  } else if (v >= -32n) w.u8(Number(v) & 0xff);
  else if (v >= -128n) {
    w.u8(0xd0);
    w.u8(Number(v) & 0xff);
  } else if (v >= -32768n) {
    w.u8(0xd1);
    w.u16(Number(v) & 0xffff);
  } else if (v >= -2147483648n) {
    w.u8(0xd2);
    w.u32(Number(v) >>> 0);
  } else if (v >= -9223372036854775808n) {
    w.u8(0xd3);
    w.i64(v);
  } else throw encodeError(`integer ${v} does not fit in 64 bits`);
}

function writeStr(w: Writer, s: string): void {
  const b = utf8.encode(s);
  if (b.length < 32) w.u8(0xa0 | b.length);
  else if (b.length < 0x100) {
    w.u8(0xd9);
    w.u8(b.length);
  } else if (b.length < 0x10000) {
    w.u8(0xda);
    w.u16(b.length);
  } else {
    w.u8(0xdb);
    w.u32(b.length);
  }
  w.bytes(b);
}

function writeBin(w: Writer, b: Uint8Array): void {
  if (b.length < 0x100) {
    w.u8(0xc4);
    w.u8(b.length);
  } else if (b.length < 0x10000) {
    w.u8(0xc5);
    w.u16(b.length);
  } else {
    w.u8(0xc6);
    w.u32(b.length);
  }
  w.bytes(b);
}

function writeHeader(w: Writer, n: number, fix: number, c16: number, c32: number): void {
  if (n < 16) w.u8(fix | n);
  else if (n < 0x10000) {
    w.u8(c16);
    w.u16(n);
  } else {
    w.u8(c32);
    w.u32(n);
  }
}

function encodeError(message: string): ProvaelError {
  return new ProvaelError("internal/unserialisable", `msgpack: ${message}`);
}

function writeKey(w: Writer, key: string | Uint8Array | number): void {
  if (typeof key === "string") writeStr(w, key);
  else if (key instanceof Uint8Array) writeBin(w, key);
  else writeValue(w, key, 0);
}

function writeValue(w: Writer, v: Encodable, depth: number): void {
  if (depth > 64) throw encodeError("value nested more than 64 levels deep");
  if (v === null || v === undefined) w.u8(0xc0);
  else if (v === true) w.u8(0xc3);
  else if (v === false) w.u8(0xc2);
  else if (typeof v === "number") {
    // Integral numbers go as msgpack ints, like Python ints; anything else as float64.
    if (Number.isSafeInteger(v) && !Object.is(v, -0)) writeInt(w, BigInt(v));
    else {
      w.u8(0xcb);
      w.f64(v);
    }
  } else if (typeof v === "bigint") writeInt(w, v);
  else if (typeof v === "string") writeStr(w, v);
  else if (v instanceof Uint8Array) writeBin(w, v);
  else if (v instanceof MsgFloat) {
    w.u8(0xcb);
    w.f64(v.value);
  } else if (Array.isArray(v)) {
    const a = v as readonly Encodable[];
    writeHeader(w, a.length, 0x90, 0xdc, 0xdd);
    for (const x of a) writeValue(w, x, depth + 1);
  } else if (v instanceof Map) {
    const m = v as ReadonlyMap<string | Uint8Array | number, Encodable>;
    writeHeader(w, m.size, 0x80, 0xde, 0xdf);
    for (const [k, x] of m) {
      writeKey(w, k);
      writeValue(w, x, depth + 1);
    }
  } else if (typeof v === "object") {
    if (ArrayBuffer.isView(v)) throw encodeError("typed arrays other than Uint8Array need a codec");
    const entries = Object.entries(v as { [key: string]: Encodable }).filter(
      ([, x]) => x !== undefined,
    );
    writeHeader(w, entries.length, 0x80, 0xde, 0xdf);
    for (const [k, x] of entries) {
      writeStr(w, k);
      writeValue(w, x, depth + 1);
    }
  } else throw encodeError(`cannot encode a ${typeof v}`);
}

/**
 * Encodes a value as msgpack bytes.
 *
 * @example
 *   encodeMsgpack({ prompt: "pick up the bowl" }); // 81 a6 "prompt" b0 "pick up the bowl"
 */
export function encodeMsgpack(value: Encodable): Uint8Array {
  const w = new Writer();
  writeValue(w, value, 0);
  return w.result();
}

/** A decode failure: the peer sent bytes that are not the msgpack we accept. */
function decodeError(message: string, offset: number): ProvaelError {
  return new ProvaelError("policy/protocol", `malformed msgpack at byte ${offset}: ${message}`, {
    details: { offset },
    hint: "the peer does not speak this protocol; check the --policy-url and the server's protocol",
  });
}

class Reader {
  private readonly view: DataView;
  pos = 0;

  constructor(
    readonly buf: Uint8Array,
    readonly budget: DecodeBudget,
  ) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  need(n: number): void {
    if (this.pos + n > this.buf.length)
      throw decodeError(`needs ${n} more byte(s), the frame ends`, this.pos);
  }
  u8(): number {
    this.need(1);
    return this.buf[this.pos++] as number;
  }
  u16(): number {
    this.need(2);
    const v = this.view.getUint16(this.pos);
    this.pos += 2;
    return v;
  }
  u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.pos);
    this.pos += 4;
    return v;
  }
  take(n: number): Uint8Array {
    this.need(n);
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
  f32(): number {
    this.need(4);
    const v = this.view.getFloat32(this.pos);
    this.pos += 4;
    return v;
  }
  f64(): number {
    this.need(8);
    const v = this.view.getFloat64(this.pos);
    this.pos += 8;
    return v;
  }
  int64(signed: boolean): number | bigint {
    this.need(8);
    const v = signed ? this.view.getBigInt64(this.pos) : this.view.getBigUint64(this.pos);
    this.pos += 8;
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(v)
      : v;
  }
}

function readStr(r: Reader, n: number): string {
  const at = r.pos;
  r.need(n);
  r.budget.take(0, COST.container + n * COST.stringPerByte);
  try {
    return utf8Strict.decode(r.take(n));
  } catch (e) {
    if (e instanceof ProvaelError) throw e;
    throw decodeError("str is not valid UTF-8", at);
  }
}

function readArray(r: Reader, n: number, depth: number): MsgValue[] {
  // Every element takes at least one byte, so a count beyond the frame is a lie.
  r.need(n);
  r.budget.take(n, COST.container + n * COST.slot);
  const out: MsgValue[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = readValue(r, depth + 1);
  return out;
}

function readMap(r: Reader, n: number, depth: number): MsgMap {
  r.need(2 * n);
  r.budget.take(2 * n, COST.container + n * COST.mapEntry);
  const entries: Array<[MsgValue, MsgValue]> = new Array(n);
  for (let i = 0; i < n; i++) {
    const k = readValue(r, depth + 1);
    entries[i] = [k, readValue(r, depth + 1)];
  }
  return new MsgMap(entries);
}

function readValue(r: Reader, depth: number): MsgValue {
  r.budget.depth(depth);
  const at = r.pos;
  const t = r.u8();
  if (t < 0x80) return t;
  if (t >= 0xe0) return t - 0x100;
  if (t >= 0x80 && t <= 0x8f) return readMap(r, t & 0x0f, depth);
  if (t >= 0x90 && t <= 0x9f) return readArray(r, t & 0x0f, depth);
  if (t >= 0xa0 && t <= 0xbf) return readStr(r, t & 0x1f);
  switch (t) {
    case 0xc0:
      return null;
    case 0xc2:
      return false;
    case 0xc3:
      return true;
    case 0xc4:
      return r.take(r.u8());
    case 0xc5:
      return r.take(r.u16());
    case 0xc6:
      return r.take(r.u32());
    case 0xca:
      return r.f32();
    case 0xcb:
      return r.f64();
    case 0xcc:
      return r.u8();
    case 0xcd:
      return r.u16();
    case 0xce:
      return r.u32();
    case 0xcf:
      return r.int64(false);
    case 0xd0: {
      const v = r.u8();
      return v > 0x7f ? v - 0x100 : v;
    }
    case 0xd1: {
      const v = r.u16();
      return v > 0x7fff ? v - 0x10000 : v;
    }
    case 0xd2:
      return r.u32() | 0;
    case 0xd3:
      return r.int64(true);
    case 0xd9:
      return readStr(r, r.u8());
    case 0xda:
      return readStr(r, r.u16());
    case 0xdb:
      return readStr(r, r.u32());
    case 0xdc:
      return readArray(r, r.u16(), depth);
    case 0xdd:
      return readArray(r, r.u32(), depth);
    case 0xde:
      return readMap(r, r.u16(), depth);
    case 0xdf:
      return readMap(r, r.u32(), depth);
    default:
      if ((t >= 0xc7 && t <= 0xc9) || (t >= 0xd4 && t <= 0xd8))
        throw decodeError(`msgpack ext type (0x${t.toString(16)}) is not accepted`, at);
      throw decodeError(`unknown type byte 0x${t.toString(16)}`, at);
  }
}

/**
 * Decodes one msgpack value that must fill the whole frame. `bin` values are views on `bytes`.
 * `limits` bounds what decoding may build (the defaults unless given); pass a `DecodeBudget` to
 * keep charging it afterwards (vla-eval's PNGs are paid from the same frame's budget).
 *
 * @example
 *   decodeMsgpack(Uint8Array.of(0x80)); // MsgMap { entries: [] }
 */
export function decodeMsgpack(
  bytes: Uint8Array,
  limits: DecodeLimits | DecodeBudget = DEFAULT_DECODE_LIMITS,
): MsgValue {
  const budget = limits instanceof DecodeBudget ? limits : new DecodeBudget(limits, "msgpack");
  const r = new Reader(bytes, budget);
  budget.take(1, 0);
  const v = readValue(r, 0);
  if (r.pos !== bytes.length)
    throw decodeError(`${bytes.length - r.pos} trailing byte(s) after the value`, r.pos);
  return v;
}
