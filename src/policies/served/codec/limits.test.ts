import { describe, expect, it } from "vitest";
import { ProvaelError } from "../../../core/errors.js";
import { chargeJson, decodeJsonNumpy } from "./json-numpy.js";
import { DEFAULT_DECODE_LIMITS, DecodeBudget, decodeLimits } from "./limits.js";
import { decodeMsgpack, encodeMsgpack } from "./msgpack.js";
import { uint8Array } from "./ndarray.js";
import { decodeOpenpi } from "./openpi.js";
import { decodeEnvelope, encodeEnvelope, encodePng, pngDecodeCost } from "./vla-eval.js";

const bound = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    if (e instanceof ProvaelError) return e.details.bound;
    throw e;
  }
  return null;
};

describe("decode bounds", () => {
  it("msgpack: a container's declared length is charged before it is allocated", () => {
    const b = new Uint8Array(5 + 300_000);
    b[0] = 0xdd;
    new DataView(b.buffer).setUint32(1, 300_000);
    b.fill(0x80, 5);
    // Refused by the header's count (the bound named), not by running out of bytes to read.
    expect(bound(() => decodeMsgpack(b))).toBe("maxElements");
    expect(bound(() => decodeOpenpi(b))).toBe("maxElements");
    // Under a bound the same shape decodes.
    expect(decodeMsgpack(b, decodeLimits({ maxElements: 300_001 }))).toHaveLength(300_000);
  });

  it("msgpack: many small containers add up (no single header is large)", () => {
    // 20,000 fixarrays of 15 nils: 300,000 values, no header above 15.
    const v = Array.from({ length: 20_000 }, () => new Array(15).fill(null));
    expect(bound(() => decodeMsgpack(encodeMsgpack(v)))).toBe("maxElements");
  });

  it("msgpack: strings are charged as the text they copy, depth as nesting", () => {
    const s = encodeMsgpack("x".repeat(2000));
    expect(bound(() => decodeMsgpack(s, decodeLimits({ maxBuiltBytes: 1000 })))).toBe(
      "maxBuiltBytes",
    );
    // 70 nested one-element arrays around an empty one (the encoder refuses to write this).
    const deep = Uint8Array.from([...new Array(70).fill(0x91), 0x90]);
    expect(bound(() => decodeMsgpack(deep))).toBe("maxDepth");
  });

  it("json-numpy: counts structure outside strings only, before JSON.parse", () => {
    const budget = new DecodeBudget(DEFAULT_DECODE_LIMITS, "t");
    chargeJson('{"a":"{[,:]}\\"{,","b":[1,2]}', budget);
    // The root, the object, two entries, a comma between them, the array and its comma: an
    // over-count of at most twice the values, and nothing inside the strings.
    expect(budget.elements).toBe(7);
    const many = `[${"{},".repeat(300_000)}{}]`;
    expect(bound(() => decodeJsonNumpy(many))).toBe("maxElements");
    expect(bound(() => decodeJsonNumpy(`${"[".repeat(100)}${"]".repeat(100)}`))).toBe("maxDepth");
    expect(bound(() => decodeJsonNumpy('"x"', decodeLimits({ maxBuiltBytes: 10 })))).toBe(
      "maxBuiltBytes",
    );
    // base64 is paid for before it is decoded.
    const arr = `{"__numpy__":"${"A".repeat(4000)}","dtype":"|u1","shape":[3000]}`;
    expect(bound(() => decodeJsonNumpy(arr, decodeLimits({ maxBuiltBytes: 9000 })))).toBe(
      "maxBuiltBytes",
    );
    expect(decodeJsonNumpy(arr)).toHaveProperty("shape", [3000]);
  });

  it("vla-eval: PNGs are charged from the frame's budget before inflating; LIBERO frames fit", () => {
    const png = (w: number, h: number) => encodePng(new Uint8Array(w * h * 3), w, h, 3);
    const image = (w: number, h: number) => ({
      __image__: true,
      format: "png",
      data: png(w, h),
      shape: [h, w, 3],
    });
    const frame = (images: Record<string, unknown>) =>
      encodeMsgpack({ type: "observation", payload: { images }, seq: 1, timestamp: 0 } as never);
    // Four LIBERO 256x256 cameras in one observation decode under the defaults.
    const libero = decodeEnvelope(
      frame({ a: image(256, 256), b: image(256, 256), c: image(256, 256), d: image(256, 256) }),
    );
    expect(Object.keys(libero.payload.images as object)).toHaveLength(4);
    // A PNG declaring 4000x3000 (a black one is a few kilobytes) would decode to 36 MB, pngjs's
    // RGBA and scanlines besides: its header, patched onto a small PNG, is all it takes.
    const bomb = image(4, 4);
    const dv = new DataView(bomb.data.buffer, bomb.data.byteOffset, bomb.data.byteLength);
    dv.setUint32(16, 4000);
    dv.setUint32(20, 3000);
    bomb.shape = [3000, 4000, 3];
    expect(pngDecodeCost(3000, 4000, 3)).toBeGreaterThan(100_000_000);
    expect(bound(() => decodeEnvelope(frame({ a: bomb, b: bomb })))).toBe("maxBuiltBytes");
  });

  it("vla-eval: an interlaced PNG (whose inflate pngjs does not bound) is refused", () => {
    const data = encodePng(new Uint8Array(4 * 4 * 3), 4, 4, 3);
    data[28] = 1;
    const frame = encodeEnvelope({
      type: "observation",
      payload: { image: uint8Array(new Uint8Array(48), [4, 4, 3]) },
      seq: 1,
      timestamp: 0,
    });
    expect(decodeEnvelope(frame).type).toBe("observation");
    const bad = encodeMsgpack({
      type: "observation",
      payload: { image: { __image__: true, format: "png", data, shape: [4, 4, 3] } },
      seq: 1,
      timestamp: 0,
    } as never);
    expect(() => decodeEnvelope(bad)).toThrow(/interlaced/);
  });
});
