/**
 * PNG for every part of Provael (report frames, LeRobot datasets, the vla-eval image codec):
 * one encoder and one decoder over pngjs, between PNG bytes and our HWC `Image`.
 */
import pngjs from "pngjs";
import { ProvaelError } from "./errors.js";
import type { Image } from "./types.js";

export interface PngEncodeOptions {
  /**
   * pngjs scanline filter; the default (adaptive) gives the smallest files, 4 (Paeth) half the
   * encoding time. Callers whose bytes are recorded keep the filter they were recorded with.
   */
  filterType?: -1 | 0 | 1 | 2 | 3 | 4;
}

/**
 * Encodes an HWC 8-bit image (1 channel grey, 3 RGB, 4 RGBA) as PNG bytes; grey stays grey and
 * RGB carries no alpha, so a decoder on the other side gets back the channels that were sent.
 *
 * @example
 *   import { writeFileSync } from "node:fs";
 *   writeFileSync("/tmp/agentview.png", encodePng(obs.images.agentview));
 */
export function encodePng(image: Image, options: PngEncodeOptions = {}): Buffer {
  const { width, height, channels, data } = image;
  if (![1, 3, 4].includes(channels) || data.length !== width * height * channels) {
    throw new ProvaelError("internal/invariant", "image does not match its declared shape", {
      details: { width, height, channels, bytes: data.length },
      hint: "expect width*height*channels bytes with 1, 3 or 4 channels",
    });
  }
  // A plain RGBA buffer, not `new PNG()`: pngjs's PNG object is a stream that is never released
  // (about 100 kB a call kept for the life of the process, which a 65,000-frame recording turned
  // into 12 GB); the packer reads only width, height and data, so the bytes are the same.
  const out = Buffer.allocUnsafe(width * height * 4);
  for (let i = 0, n = width * height; i < n; i++) {
    const s = i * channels;
    const d = 4 * i;
    const r = data[s] as number;
    out[d] = r;
    out[d + 1] = channels === 1 ? r : (data[s + 1] as number);
    out[d + 2] = channels === 1 ? r : (data[s + 2] as number);
    out[d + 3] = channels === 4 ? (data[s + 3] as number) : 255;
  }
  const colorType = channels === 4 ? 6 : channels === 1 ? 0 : 2;
  return pngjs.PNG.sync.write({ width, height, data: out } as pngjs.PNG, {
    colorType,
    ...(options.filterType === undefined ? {} : { filterType: options.filterType }),
  });
}

/** What a PNG's IHDR chunk declares, read without inflating anything; null when not a PNG. */
export function pngHeader(
  bytes: Uint8Array,
): { width: number; height: number; interlaced: boolean } | null {
  // Signature (8), chunk length (4), "IHDR" (4), width, height (4 each, big-endian), bit depth,
  // colour type, compression, filter, interlace (1 each).
  if (bytes.length < 29 || Buffer.from(bytes.subarray(12, 16)).toString("latin1") !== "IHDR")
    return null;
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { width: dv.getUint32(16), height: dv.getUint32(20), interlaced: bytes[28] !== 0 };
}

/**
 * Decodes PNG bytes into an HWC image with `channels` channels (grey, RGB or RGBA). Throws what
 * pngjs throws on a broken file; callers that read untrusted bytes check `pngHeader` first.
 */
export function decodePng(bytes: Uint8Array, channels = 3): Image {
  const png = pngjs.PNG.sync.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const n = png.width * png.height;
  const data = new Uint8Array(n * channels);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < channels; k++) data[i * channels + k] = png.data[4 * i + k] as number;
  }
  return { width: png.width, height: png.height, channels, data };
}
