import { describe, expect, it } from "vitest";
import { encodeJpeg } from "../../../core/jpeg.js";
import { decodeJsonNumpy, encodeJsonNumpy } from "./json-numpy.js";
import { DecodeBudget, decodeLimits } from "./limits.js";
import { decodeMsgpack, encodeMsgpack, type MsgMap } from "./msgpack.js";
import { float32Array, float64Array, NdArray, toFloat64, uint8Array } from "./ndarray.js";
import { isWireMap } from "./tree.js";
import {
  decodeEnvelope,
  decodeJpeg,
  decodePng,
  EncodedImage,
  encodeEnvelope,
  encodePng,
} from "./vla-eval.js";

describe("json-numpy", () => {
  it("writes {__numpy__, dtype, shape} with base64 of the raw bytes", () => {
    expect(encodeJsonNumpy(float64Array([1], [1]))).toBe(
      '{"__numpy__":"AAAAAAAA8D8=","dtype":"<f8","shape":[1]}',
    );
  });

  it("round-trips arrays inside objects, and a 0-d array decodes to its element", () => {
    const body = {
      image: uint8Array(Uint8Array.of(1, 2, 3, 4, 5, 6), [1, 2, 3]),
      instruction: "go",
    };
    const back = decodeJsonNumpy(encodeJsonNumpy(body as never));
    if (!isWireMap(back)) throw new Error("not a map");
    expect(back.instruction).toBe("go");
    expect((back.image as NdArray).shape).toEqual([1, 2, 3]);
    expect(decodeJsonNumpy('{"__numpy__":"AACAPw==","dtype":"<f4","shape":[]}')).toBe(1);
    expect(decodeJsonNumpy('"error"')).toBe("error");
  });

  it("refuses bad base64, byte counts that do not match, object dtypes and non-JSON", () => {
    expect(() => decodeJsonNumpy('{"__numpy__":"AAA","dtype":"<f4","shape":[1]}')).toThrow(
      /base64/,
    );
    expect(() => decodeJsonNumpy('{"__numpy__":"AAAAAA==","dtype":"<f4","shape":[2]}')).toThrow(
      /needs 8 bytes/,
    );
    expect(() => decodeJsonNumpy('{"__numpy__":"AAAAAA==","dtype":"|O","shape":[1]}')).toThrow(
      /dtype/,
    );
    expect(() => decodeJsonNumpy("{")).toThrow(/not JSON/);
  });
});

describe("vla-eval frames", () => {
  it("encodes the envelope with str keys, seq as int and timestamp as float64", () => {
    const bytes = encodeEnvelope({ type: "hello", payload: {}, seq: 1, timestamp: 2 });
    const m = decodeMsgpack(bytes) as MsgMap;
    expect(m.entries.map(([k]) => k)).toEqual(["type", "payload", "seq", "timestamp"]);
    // 2.0 must stay a float (cb …), as Python's time.time() is.
    expect(Buffer.from(bytes).toString("hex")).toMatch(/a974696d657374616d70cb4000000000000000$/);
  });

  it("sends HWC uint8 images as PNG and other arrays as str-keyed __ndarray__ maps", () => {
    const img = uint8Array(
      Uint8Array.from({ length: 4 * 3 * 3 }, (_, i) => i * 7),
      [4, 3, 3],
    );
    const payload = { images: { agentview: img }, states: float32Array([0.5, 1], [2]) };
    const bytes = encodeEnvelope({
      type: "observation",
      payload: payload as never,
      seq: 3,
      timestamp: 1.5,
    });
    const raw = decodeMsgpack(bytes) as MsgMap;
    const p = raw.get("payload") as MsgMap;
    const pic = (p.get("images") as MsgMap).get("agentview") as MsgMap;
    expect(pic.get("format")).toBe("png");
    expect((p.get("states") as MsgMap).get("__ndarray__")).toBe(true);
    const env = decodeEnvelope(bytes);
    expect(env).toMatchObject({ type: "observation", seq: 3, timestamp: 1.5 });
    const back = (env.payload.images as Record<string, NdArray>).agentview as NdArray;
    expect(Array.from(back.data)).toEqual(Array.from(img.data));
    expect(Array.from(toFloat64(env.payload.states as NdArray))).toEqual([0.5, 1]);
  });

  it("deferImages keeps a PNG as its bytes: checked now, pixels on first read, re-sent as the same bytes", () => {
    const pixels = Uint8Array.from({ length: 4 * 3 * 3 }, (_, i) => i * 7);
    const payload = { images: { agentview: uint8Array(pixels, [4, 3, 3]) } };
    const bytes = encodeEnvelope({
      type: "observation",
      payload: payload as never,
      seq: 1,
      timestamp: 0,
    });
    const env = decodeEnvelope(bytes, undefined, { deferImages: true });
    const img = (env.payload.images as Record<string, NdArray>).agentview as EncodedImage;
    expect(img).toBeInstanceOf(EncodedImage);
    expect([img.format, img.width, img.height, img.channels]).toEqual(["png", 3, 4, 3]);
    expect(Array.from(img.data)).toEqual(Array.from(pixels));
    // Encoded again, it is the same __image__ map, bytes and all.
    const again = encodeEnvelope({ ...env, payload: env.payload });
    const pic = (
      ((decodeMsgpack(again) as MsgMap).get("payload") as MsgMap).get("images") as MsgMap
    ).get("agentview") as MsgMap;
    expect(pic.get("format")).toBe("png");
    expect(Buffer.compare(pic.get("data") as Uint8Array, encodePng(pixels, 3, 4, 3))).toBe(0);
    // A header that lies about the size is refused when the frame is read, not later.
    const lying = encodeMsgpack(
      new Map<string, unknown>([
        ["type", "observation"],
        [
          "payload",
          new Map([
            [
              "images",
              new Map([
                [
                  "agentview",
                  new Map<string, unknown>([
                    ["__image__", true],
                    ["format", "png"],
                    ["data", encodePng(pixels, 3, 4, 3)],
                    ["shape", [8, 8, 3]],
                  ]),
                ],
              ]),
            ],
          ]),
        ],
        ["seq", 1],
        ["timestamp", 0],
      ]) as never,
    );
    expect(() => decodeEnvelope(lying, undefined, { deferImages: true })).toThrow(/the shape says/);
  });

  it("decodes jpeg __image__ maps to HWC uint8 near the encoded pixels, charging the budget first", () => {
    const w = 32;
    const h = 24;
    const data = new Uint8Array(w * h * 3);
    for (let i = 0; i < w * h; i++) {
      data[3 * i] = (i % w) * 8;
      data[3 * i + 1] = Math.floor(i / w) * 10;
      data[3 * i + 2] = 128;
    }
    const bytes = encodeMsgpack({
      type: "observation",
      payload: {
        images: {
          agentview: {
            __image__: true,
            format: "jpeg",
            data: encodeJpeg({ width: w, height: h, channels: 3, data }, 95),
            shape: [h, w, 3],
          },
        },
      },
      seq: 2,
      timestamp: 0,
    } as never);
    const env = decodeEnvelope(bytes);
    const back = (env.payload.images as Record<string, NdArray>).agentview as NdArray;
    expect(back.shape).toEqual([h, w, 3]);
    let worst = 0;
    for (let i = 0; i < data.length; i++)
      worst = Math.max(worst, Math.abs((back.data[i] as number) - (data[i] as number)));
    expect(worst).toBeGreaterThan(0); // lossy: this is JPEG, not a raw copy
    expect(worst).toBeLessThan(24);
    // A frame whose declared JPEG would build more than the budget allows is refused unread.
    const budget = new DecodeBudget(decodeLimits({ maxBuiltBytes: 1000 }), "test frame");
    const jpegBytes = encodeJpeg({ width: w, height: h, channels: 3, data }, 95);
    expect(() => decodeJpeg(jpegBytes, [h, w, 3], budget)).toThrow(/maxBuiltBytes/);
  });

  it("requires all four envelope keys and refuses unknown types, bad JPEGs and lying PNG headers", () => {
    expect(() => decodeEnvelope(encodeMsgpack({ type: "hello", payload: {}, seq: 1 }))).toThrow(
      /timestamp/,
    );
    expect(() =>
      decodeEnvelope(encodeMsgpack({ type: "bogus", payload: {}, seq: 1, timestamp: 0 })),
    ).toThrow(/unknown message type/);
    const frame = (img: Record<string, unknown>) =>
      encodeMsgpack({ type: "observation", payload: { img }, seq: 1, timestamp: 0 } as never);
    expect(() =>
      decodeEnvelope(
        frame({ __image__: true, format: "jpeg", data: new Uint8Array(4), shape: [1, 1, 3] }),
      ),
    ).toThrow(/not a JPEG/);
    expect(() =>
      decodeEnvelope(
        frame({ __image__: true, format: "webp", data: new Uint8Array(4), shape: [1, 1, 3] }),
      ),
    ).toThrow(/"webp" is not supported/);
    const small = encodeJpeg({ width: 2, height: 2, channels: 3, data: new Uint8Array(12) });
    expect(() => decodeJpeg(small, [4, 4, 3])).toThrow(/JPEG is 2x2, the shape says 4x4/);
    expect(() => decodeJpeg(small, [2, 2, 4])).toThrow(/not HWC with 3 channels/);
    const png = encodePng(new Uint8Array(2 * 2 * 3), 2, 2, 3);
    expect(() => decodePng(png, [4, 4, 3])).toThrow(/PNG is 2x2, the shape says 4x4/);
    expect(() => decodePng(png, [100000, 100000, 3])).toThrow(/larger than/);
  });

  it("refuses dtype kinds upstream refuses", () => {
    const frame = encodeMsgpack({
      type: "action",
      payload: {
        actions: { __ndarray__: true, data: new Uint8Array(8), dtype: "<c8", shape: [1] },
      },
      seq: 1,
      timestamp: 0,
    });
    expect(() => decodeEnvelope(frame)).toThrow(/unsupported numpy dtype/);
    expect(new NdArray("<f4", [2], new Uint8Array(8)).size).toBe(2);
  });
});
