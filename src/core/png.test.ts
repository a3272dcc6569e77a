import pngjs from "pngjs";
import { describe, expect, it, vi } from "vitest";
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

describe("decodePng's direct path", () => {
  // What pngjs alone makes of the bytes: the reference the direct path must equal.
  function viaPngjs(bytes: Uint8Array, channels: number): Image {
    const png = pngjs.PNG.sync.read(Buffer.from(bytes));
    const data = new Uint8Array(png.width * png.height * channels);
    for (let i = 0; i < png.width * png.height; i++)
      for (let k = 0; k < channels; k++) data[i * channels + k] = png.data[4 * i + k] as number;
    return { width: png.width, height: png.height, channels, data };
  }
  function rgba(width: number, height: number): pngjs.PNG {
    const png = new pngjs.PNG({ width, height });
    for (let i = 0; i < png.data.length; i++) png.data[i] = (i * 53 + (i >> 5) * 7) & 255;
    return png;
  }

  it("decodes what pngjs decodes, for every colour type, filter and channel count", () => {
    for (const colorType of [0, 2, 4, 6] as const) {
      for (const filterType of [-1, 0, 1, 2, 3, 4] as const) {
        const bytes = pngjs.PNG.sync.write(rgba(23, 9), { colorType, filterType });
        for (const channels of [1, 3, 4]) {
          expect(decodePng(bytes, channels)).toEqual(viaPngjs(bytes, channels));
        }
      }
    }
  });

  it("takes 8-bit files itself and hands pngjs the rest (16-bit here), with the same result", () => {
    const read = vi.spyOn(pngjs.PNG.sync, "read");
    decodePng(encodePng(image(4, 4, 3)), 3);
    expect(read).not.toHaveBeenCalled();
    const deep = pngjs.PNG.sync.write(rgba(8, 8), { colorType: 2, bitDepth: 16 });
    expect(decodePng(deep, 3)).toEqual(viaPngjs(deep, 3));
    expect(read).toHaveBeenCalledTimes(2); // once by decodePng, once by the reference
    read.mockRestore();
  });

  it("leaves a file with two headers to pngjs", () => {
    const good = encodePng(image(6, 4, 3));
    // Signature (8) and IHDR (25 bytes with length, type and checksum), then the header again.
    const twice = Buffer.concat([good.subarray(0, 33), good.subarray(8, 33), good.subarray(33)]);
    const read = vi.spyOn(pngjs.PNG.sync, "read");
    let ours: unknown;
    try {
      ours = decodePng(twice);
    } catch (e) {
      ours = e;
    }
    expect(read).toHaveBeenCalledTimes(1);
    read.mockRestore();
    let theirs: unknown;
    try {
      theirs = viaPngjs(twice, 3);
    } catch (e) {
      theirs = e;
    }
    expect(ours).toEqual(theirs);
  });

  it("throws on a broken chunk checksum, a short image and a cut file", () => {
    const good = encodePng(image(12, 6, 3));
    const flipped = Uint8Array.from(good);
    flipped[20] = (flipped[20] as number) ^ 1; // inside IHDR: its checksum no longer holds
    expect(() => decodePng(flipped)).toThrow(/checksum/);
    expect(() => decodePng(good.subarray(0, good.length - 20))).toThrow();
    // A header that promises more rows than the data holds.
    const taller = Uint8Array.from(good);
    new DataView(taller.buffer).setUint32(20, 7);
    const crc = crc32Of(taller.subarray(12, 29));
    new DataView(taller.buffer).setUint32(29, crc);
    expect(() => decodePng(taller)).toThrow(/short/);
  });
});

function crc32Of(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}
