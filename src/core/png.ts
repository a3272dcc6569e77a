/**
 * PNG for every part of Provael (report frames, LeRobot datasets, the vla-eval image codec):
 * one encoder and one decoder over pngjs, between PNG bytes and our HWC `Image`. Decoding takes
 * a direct path for the PNGs Provael and most encoders write (8-bit grey, RGB or RGBA, not
 * interlaced, no palette or transparency chunk): zlib's native inflate and one pass of
 * unfiltering into the channels asked for, about twice pngjs's speed (training reads a few hundred
 * thousand recorded frames); every other PNG goes through pngjs.
 */
import * as zlib from "node:zlib";
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
 * Decodes PNG bytes into an HWC image with `channels` channels (grey, RGB or RGBA): the file's
 * pixels as RGBA (grey spread to R, G and B, alpha 255 where the file has none), cut to the first
 * `channels`. Throws on a broken file (bad signature, chunk checksum, zlib stream or size);
 * callers that read untrusted bytes check `pngHeader` first.
 */
export function decodePng(bytes: Uint8Array, channels = 3): Image {
  return decodeDirect(bytes, channels) ?? decodeWithPngjs(bytes, channels);
}

function decodeWithPngjs(bytes: Uint8Array, channels: number): Image {
  const png = pngjs.PNG.sync.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const n = png.width * png.height;
  const data = new Uint8Array(n * channels);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < channels; k++) data[i * channels + k] = png.data[4 * i + k] as number;
  }
  return { width: png.width, height: png.height, channels, data };
}

const SIGNATURE = [137, 80, 78, 71, 13, 10, 26, 10];
/** Samples per pixel of the 8-bit colour types the direct path reads: grey, RGB, grey+alpha, RGBA. */
const SAMPLES: Record<number, number> = { 0: 1, 2: 3, 4: 2, 6: 4 };
/** Ancillary chunks that change no pixel as pngjs decodes them; any other sends a file to pngjs. */
const INERT = new Set(["tEXt", "zTXt", "iTXt", "tIME", "pHYs", "gAMA", "cHRM", "sRGB", "iCCP"]);

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

// zlib's own (Node 20.15 and later) where there is one: the checksum is a fifth of the work.
const nativeCrc32 = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;

function crc32(bytes: Uint8Array, from: number, to: number): number {
  if (nativeCrc32) return nativeCrc32(bytes.subarray(from, to)) >>> 0;
  let c = 0xffffffff;
  for (let i = from; i < to; i++)
    c = (CRC_TABLE[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/**
 * The direct path; undefined for a PNG it does not take (pngjs decodes those). A file it takes
 * but finds broken throws, as pngjs would.
 */
function decodeDirect(bytes: Uint8Array, channels: number): Image | undefined {
  if (bytes.length < 8 || SIGNATURE.some((b, i) => bytes[i] !== b)) return undefined;
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let width = 0;
  let height = 0;
  let samples = 0;
  const idat: Uint8Array[] = [];
  let at = 8;
  let ended = false;
  while (!ended) {
    if (at + 12 > bytes.length) throw new Error("PNG ends inside a chunk");
    const length = dv.getUint32(at);
    const end = at + 8 + length;
    if (end + 4 > bytes.length) throw new Error("PNG ends inside a chunk");
    const type = String.fromCharCode(...bytes.subarray(at + 4, at + 8));
    if (crc32(bytes, at + 4, end) !== dv.getUint32(end)) throw new Error(`bad ${type} checksum`);
    const data = bytes.subarray(at + 8, end);
    if (type === "IHDR") {
      // A second header, or image data before the first, is not a file to guess at.
      if (samples !== 0 || idat.length > 0 || length !== 13) return undefined;
      const [depth, colour, , , interlace] = data.subarray(8, 13);
      width = dv.getUint32(at + 8);
      height = dv.getUint32(at + 12);
      samples = SAMPLES[colour as number] ?? 0;
      if (depth !== 8 || samples === 0 || interlace !== 0) return undefined;
    } else if (type === "IDAT") idat.push(data);
    else if (type === "IEND") ended = true;
    else if (!INERT.has(type)) return undefined;
    at = end + 4;
  }
  if (samples === 0 || width === 0 || height === 0) return undefined;
  const stride = width * samples;
  // The exact size the header promises, and not a byte more: a zlib bomb stops here.
  const raw = zlib.inflateSync(idat.length === 1 ? (idat[0] as Uint8Array) : Buffer.concat(idat), {
    maxOutputLength: height * (stride + 1),
  });
  if (raw.length !== height * (stride + 1)) throw new Error("PNG image data is short");
  const rows = unfilter(raw, height, stride, samples);
  // RGB asked of RGB (or grey of grey): the rows are the image.
  if (channels === samples && (samples === 3 || samples === 1))
    return { width, height, channels, data: rows };
  const n = width * height;
  const out = new Uint8Array(n * channels);
  // The file's samples as pngjs's RGBA: grey to R, G and B; alpha 255 where there is none.
  const grey = samples <= 2;
  const alpha = samples === 2 || samples === 4 ? samples - 1 : -1;
  for (let i = 0; i < n; i++) {
    const s = i * samples;
    const o = i * channels;
    for (let k = 0; k < channels; k++) {
      out[o + k] =
        k === 3
          ? alpha < 0
            ? 255
            : (rows[s + alpha] as number)
          : (rows[s + (grey ? 0 : k)] as number);
    }
  }
  return { width, height, channels, data: out };
}

/** Undoes the five scanline filters: the rows, without their filter bytes. */
function unfilter(raw: Uint8Array, height: number, stride: number, bpp: number): Uint8Array {
  const out = new Uint8Array(height * stride);
  // One loop per filter, the row's first pixel apart (it has nothing to its left): this runs
  // over every byte of every frame a training reads.
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const src = y * (stride + 1) + 1;
    const row = y * stride;
    const up = row - stride;
    const hasUp = y > 0;
    if (filter === 0) {
      out.set(raw.subarray(src, src + stride), row);
    } else if (filter === 1) {
      for (let x = 0; x < bpp; x++) out[row + x] = raw[src + x] as number;
      for (let x = bpp; x < stride; x++)
        out[row + x] = ((raw[src + x] as number) + (out[row + x - bpp] as number)) & 0xff;
    } else if (filter === 2) {
      if (!hasUp) out.set(raw.subarray(src, src + stride), row);
      else
        for (let x = 0; x < stride; x++)
          out[row + x] = ((raw[src + x] as number) + (out[up + x] as number)) & 0xff;
    } else if (filter === 3) {
      for (let x = 0; x < stride; x++) {
        const a = x >= bpp ? (out[row + x - bpp] as number) : 0;
        const b = hasUp ? (out[up + x] as number) : 0;
        out[row + x] = ((raw[src + x] as number) + ((a + b) >> 1)) & 0xff;
      }
    } else if (filter === 4 && !hasUp) {
      // Above and upper-left are zero on the first row: Paeth picks the byte to the left.
      for (let x = 0; x < bpp; x++) out[row + x] = raw[src + x] as number;
      for (let x = bpp; x < stride; x++)
        out[row + x] = ((raw[src + x] as number) + (out[row + x - bpp] as number)) & 0xff;
    } else if (filter === 4) {
      // Left and upper-left are zero for the first pixel: Paeth picks the byte above.
      for (let x = 0; x < bpp; x++)
        out[row + x] = ((raw[src + x] as number) + (out[up + x] as number)) & 0xff;
      for (let x = bpp; x < stride; x++) {
        const a = out[row + x - bpp] as number;
        const b = out[up + x] as number;
        const c = out[up + x - bpp] as number;
        const pa = b > c ? b - c : c - b;
        const pb = a > c ? a - c : c - a;
        const t = a + b - 2 * c;
        const pc = t < 0 ? -t : t;
        out[row + x] =
          ((raw[src + x] as number) + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c)) & 0xff;
      }
    } else throw new Error(`unknown PNG filter ${filter}`);
  }
  return out;
}
