import { Packr, Unpackr } from "msgpackr";
import { describe, expect, it } from "vitest";
import { ProvaelError } from "../../../core/errors.js";
import { decodeMsgpack, encodeMsgpack, MsgFloat, MsgMap } from "./msgpack.js";
import { float32Array, NdArray, toFloat64 } from "./ndarray.js";
import { decodeOpenpi, encodeOpenpi, npScalar } from "./openpi.js";
import { asNdArray, isWireMap } from "./tree.js";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const ascii = (s: string) => Buffer.from(s, "latin1").toString("hex");

describe("openpi codec", () => {
  it("encodes float32 [1, 2] to exactly the bytes of PROTOCOLS.md §1.3", () => {
    // 84 c4 0b "__ndarray__" c3 c4 04 "data" c4 08 00 00 80 3f 00 00 00 40
    // c4 05 "dtype" a3 "<f4" c4 05 "shape" 91 02
    const want = [
      "84c40b",
      ascii("__ndarray__"),
      "c3c404",
      ascii("data"),
      "c408",
      "0000803f00000040",
      "c405",
      ascii("dtype"),
      "a3",
      ascii("<f4"),
      "c405",
      ascii("shape"),
      "9102",
    ].join("");
    expect(hex(encodeOpenpi(float32Array([1, 2], [2])))).toBe(want);
  });

  it("agrees byte for byte with msgpackr's Packr({useRecords: false}) on Buffer-keyed maps", () => {
    const packr = new Packr({ useRecords: false });
    const m = new Map<Buffer, unknown>([
      [Buffer.from("__ndarray__"), true],
      [Buffer.from("data"), Buffer.from(new Uint8Array(150528))],
      [Buffer.from("dtype"), "|u1"],
      [Buffer.from("shape"), [224, 224, 3]],
    ]);
    const ours = encodeOpenpi(new NdArray("|u1", [224, 224, 3], new Uint8Array(150528)));
    expect(hex(ours)).toBe(hex(packr.pack(m)));
    // A 224x224x3 image's data is a bin32: c6 00 02 4c 00.
    expect(hex(ours)).toContain("c600024c00");
  });

  it("decodes frames msgpackr writes, and msgpackr decodes ours", () => {
    const obs = {
      "observation/state": float32Array([0.5, -1, 2], [3]),
      prompt: "pick up the bowl",
      nested: { n: 3, f: 0.25, list: [1, "a", null, true] },
    };
    const bytes = encodeOpenpi(obs as never);
    const back = new Unpackr({ mapsAsObjects: false, useRecords: false }).unpack(
      Buffer.from(bytes),
    );
    expect(back.get("prompt")).toBe("pick up the bowl");
    const decoded = decodeOpenpi(bytes);
    if (!isWireMap(decoded)) throw new Error("not a map");
    expect(Array.from(toFloat64(asNdArray(decoded["observation/state"], "state")))).toEqual([
      0.5, -1, 2,
    ]);
    expect(decoded.nested).toEqual(Object.assign(Object.create(null), obs.nested));
  });

  it("reads any float dtype and byte order, ints, uint8 and bool", () => {
    const be = new Uint8Array(8);
    new DataView(be.buffer).setFloat32(0, 1.5, false);
    new DataView(be.buffer).setFloat32(4, -2, false);
    expect(Array.from(toFloat64(new NdArray(">f4", [2], be)))).toEqual([1.5, -2]);
    const f8 = new Uint8Array(new Float64Array([0.1, 3]).buffer);
    expect(Array.from(toFloat64(new NdArray("<f8", [2], f8)))).toEqual([0.1, 3]);
    // float16: 1.0 = 0x3c00, -2.0 = 0xc000, 0.5 = 0x3800
    const f2 = new Uint8Array(new Uint16Array([0x3c00, 0xc000, 0x3800]).buffer);
    expect(Array.from(toFloat64(new NdArray("<f2", [3], f2)))).toEqual([1, -2, 0.5]);
    const i8 = new Uint8Array(new BigInt64Array([-5n, 7n]).buffer);
    expect(Array.from(toFloat64(new NdArray("<i8", [2], i8)))).toEqual([-5, 7]);
    expect(Array.from(toFloat64(new NdArray("|b1", [2], Uint8Array.of(1, 0))))).toEqual([1, 0]);
    expect(Array.from(toFloat64(new NdArray("|u1", [2], Uint8Array.of(255, 3))))).toEqual([255, 3]);
  });

  it("refuses object, void, complex and text dtypes, and byte counts that do not match", () => {
    for (const dtype of ["|O", "|V8", "<c8", "<U4", "float32"]) {
      expect(() => toFloat64(new NdArray(dtype, [1], new Uint8Array(8)))).toThrow(ProvaelError);
    }
    const bad = encodeMsgpack(
      new Map<Uint8Array, never>([
        [Buffer.from("__ndarray__"), true as never],
        [Buffer.from("data"), new Uint8Array(7) as never],
        [Buffer.from("dtype"), "<f4" as never],
        [Buffer.from("shape"), [2] as never],
      ]),
    );
    expect(() => decodeOpenpi(bad)).toThrow(/needs 8 bytes, got 7/);
  });

  it("treats a str-keyed __ndarray__ map as a plain map, with a clear error where an array is needed", () => {
    const strKeyed = encodeMsgpack({
      __ndarray__: true,
      data: new Uint8Array(8),
      dtype: "<f4",
      shape: [2],
    });
    const v = decodeOpenpi(strKeyed);
    expect(v).not.toBeInstanceOf(NdArray);
    expect(() => asNdArray(v, "reply 'actions'")).toThrow(/msgpack bin keys/);
  });

  it("decodes __npgeneric__ scalars to plain values", () => {
    const frame = encodeMsgpack({ x: npScalar(1, "<f4"), ok: npScalar(true, "|b1") });
    const v = decodeOpenpi(frame);
    expect(isWireMap(v) && v.x).toBe(1);
    expect(isWireMap(v) && v.ok).toBe(true);
    // np.float32(1.0).item() is a Python float: it must go as float64, not as an int.
    expect(hex(frame)).toContain(`cb${"3ff0000000000000"}`);
  });
});

describe("msgpack", () => {
  it("round-trips ints at every width, floats, strings and binaries", () => {
    const values = [
      0,
      127,
      128,
      255,
      256,
      65535,
      65536,
      2 ** 32 - 1,
      2 ** 32,
      -1,
      -32,
      -33,
      -128,
      -129,
      -32768,
      -32769,
      -(2 ** 31),
      -(2 ** 31) - 1,
      0.5,
      -0.0,
      Number.MAX_SAFE_INTEGER,
      "é".repeat(40),
      "x".repeat(300),
      new Uint8Array(70000),
    ];
    for (const v of values) {
      const back = decodeMsgpack(encodeMsgpack(v));
      if (v instanceof Uint8Array) expect((back as Uint8Array).length).toBe(v.length);
      else expect(back).toBe(v);
    }
    expect(decodeMsgpack(encodeMsgpack(new MsgFloat(2)))).toBe(2);
    expect(hex(encodeMsgpack(new MsgFloat(2)))).toBe("cb4000000000000000");
  });

  it("rejects truncated frames, trailing bytes, ext types and lying lengths", () => {
    expect(() => decodeMsgpack(Uint8Array.of(0x92, 0x01))).toThrow(/frame ends/);
    expect(() => decodeMsgpack(Uint8Array.of(0x01, 0x02))).toThrow(/trailing/);
    expect(() => decodeMsgpack(Uint8Array.of(0xd4, 0x01, 0x00))).toThrow(/ext type/);
    // An array claiming 2^32-1 elements in a 5-byte frame must fail fast, not allocate.
    expect(() => decodeMsgpack(Uint8Array.of(0xdd, 0xff, 0xff, 0xff, 0xff))).toThrow(ProvaelError);
    expect(() => decodeMsgpack(Uint8Array.of(0xa2, 0xff, 0xfe))).toThrow(/UTF-8/);
  });

  it("keeps bin and str keys apart", () => {
    const m = decodeMsgpack(
      encodeMsgpack(
        new Map<string | Uint8Array, number>([
          ["a", 1],
          [Buffer.from("a"), 2],
        ]),
      ),
    );
    expect(m).toBeInstanceOf(MsgMap);
    expect((m as MsgMap).get("a")).toBe(1);
    expect((m as MsgMap).getBin("a")).toBe(2);
  });
});
