import { describe, expect, it } from "vitest";
import { decodePng, encodePng, pngHeader } from "./png.js";
import type { Image } from "./types.js";

function image(width: number, height: number, channels: number): Image {
  const data = new Uint8Array(width * height * channels);
  for (let i = 0; i < data.length; i++) data[i] = (i * 37 + 11) % 256;
  return { width, height, channels, data };
}

describe("png", () => {
  it.each([1, 3, 4])("round-trips an image with %i channel(s)", (channels) => {
    const img = image(5, 3, channels);
    expect(decodePng(encodePng(img), channels)).toEqual(img);
  });

  it("keeps bytes for a given filter, and the filter changes them", () => {
    const img = image(16, 16, 3);
    expect(encodePng(img, { filterType: 4 })).toEqual(encodePng(img, { filterType: 4 }));
    expect(encodePng(img, { filterType: 0 })).not.toEqual(encodePng(img, { filterType: 4 }));
  });

  it("reads the declared size without inflating, and rejects what is not a PNG", () => {
    expect(pngHeader(encodePng(image(7, 2, 3)))).toEqual({
      width: 7,
      height: 2,
      interlaced: false,
    });
    expect(pngHeader(new Uint8Array(40))).toBeNull();
  });

  it("refuses an image whose bytes do not match its shape", () => {
    expect(() => encodePng({ width: 2, height: 2, channels: 3, data: new Uint8Array(5) })).toThrow(
      /declared shape/,
    );
    expect(() => encodePng({ width: 1, height: 1, channels: 2, data: new Uint8Array(2) })).toThrow(
      /declared shape/,
    );
  });
});
