import pngjs from "pngjs";
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

describe("encodePng without pngjs's PNG object", () => {
  it("writes the bytes pngjs writes from its PNG object, for every channel count and filter", () => {
    for (const channels of [1, 3, 4]) {
      const image: Image = {
        width: 19,
        height: 7,
        channels,
        data: Uint8Array.from({ length: 19 * 7 * channels }, (_, i) => (i * 37 + (i >> 3)) & 255),
      };
      for (const filterType of [undefined, 0, 4] as const) {
        // The reference: the PNG object this module used to build (it is never released).
        const png = new pngjs.PNG({ width: 19, height: 7 });
        for (let i = 0; i < 19 * 7; i++) {
          const v = (k: number) => image.data[i * channels + (channels === 1 ? 0 : k)] as number;
          png.data[4 * i] = v(0);
          png.data[4 * i + 1] = v(1);
          png.data[4 * i + 2] = v(2);
          png.data[4 * i + 3] = channels === 4 ? v(3) : 255;
        }
        const reference = pngjs.PNG.sync.write(png, {
          colorType: channels === 4 ? 6 : channels === 1 ? 0 : 2,
          ...(filterType === undefined ? {} : { filterType }),
        });
        const ours = encodePng(image, filterType === undefined ? {} : { filterType });
        expect(Buffer.compare(ours, reference)).toBe(0);
      }
    }
  });
});
