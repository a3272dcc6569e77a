import { describe, expect, it } from "vitest";
import { decodeJpeg, encodeJpeg, jpegHeader } from "./jpeg.js";

function gradient(w: number, h: number, channels: number): Uint8Array {
  const data = new Uint8Array(w * h * channels);
  for (let i = 0; i < w * h; i++)
    for (let k = 0; k < channels; k++) data[i * channels + k] = ((i % w) * 5 + k * 40) % 256;
  return data;
}

describe("jpeg", () => {
  it("round-trips RGB within JPEG's loss, and reads the frame header without decoding", () => {
    const img = { width: 40, height: 30, channels: 3, data: gradient(40, 30, 3) };
    const bytes = encodeJpeg(img, 95);
    expect(jpegHeader(bytes)).toEqual({ width: 40, height: 30, components: 3, progressive: false });
    const back = decodeJpeg(bytes);
    expect([back.width, back.height, back.channels]).toEqual([40, 30, 3]);
    let sum = 0;
    for (let i = 0; i < img.data.length; i++)
      sum += Math.abs((back.data[i] as number) - (img.data[i] as number));
    expect(sum / img.data.length).toBeLessThan(4);
  });

  it("lower quality loses more, grey comes back as three equal channels, alpha is dropped", () => {
    const img = { width: 40, height: 30, channels: 3, data: gradient(40, 30, 3) };
    const err = (q: number) => {
      const back = decodeJpeg(encodeJpeg(img, q));
      let s = 0;
      for (let i = 0; i < img.data.length; i++)
        s += Math.abs((back.data[i] as number) - (img.data[i] as number));
      return s;
    };
    expect(err(20)).toBeGreaterThan(err(95));
    const grey = decodeJpeg(
      encodeJpeg({ width: 8, height: 8, channels: 1, data: gradient(8, 8, 1) }),
    );
    for (let i = 0; i < 64; i++) {
      expect(grey.data[3 * i]).toBe(grey.data[3 * i + 1]);
      expect(grey.data[3 * i + 1]).toBe(grey.data[3 * i + 2]);
    }
    const rgba = decodeJpeg(
      encodeJpeg({ width: 8, height: 8, channels: 4, data: gradient(8, 8, 4) }),
    );
    expect(rgba.channels).toBe(3);
  });

  it("refuses shapes and qualities it cannot honour, and non-JPEG bytes", () => {
    expect(() => encodeJpeg({ width: 2, height: 2, channels: 3, data: new Uint8Array(5) })).toThrow(
      /declared shape/,
    );
    expect(() =>
      encodeJpeg({ width: 2, height: 2, channels: 3, data: new Uint8Array(12) }, 0),
    ).toThrow(/quality/);
    expect(jpegHeader(Uint8Array.of(0x89, 0x50, 0x4e, 0x47))).toBeNull();
    expect(jpegHeader(Uint8Array.of(0xff, 0xd8, 0xff))).toBeNull();
    const big = encodeJpeg({
      width: 64,
      height: 64,
      channels: 3,
      data: new Uint8Array(64 * 64 * 3),
    });
    expect(() => decodeJpeg(big, 1000)).toThrow(/maxResolutionInMP/);
  });
});
