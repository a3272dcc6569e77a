/**
 * JPEG for every part of Provael (the vla-eval `__image__` codec's `jpeg` format, JPEG
 * re-encoding): one encoder and one decoder over jpeg-js, between JPEG bytes and our HWC RGB
 * `Image`. JPEG is lossy, so nothing whose bytes are recorded (report frames, datasets) uses it.
 */
import jpeg from "jpeg-js";
import { ProvaelError } from "./errors.js";
import type { Image } from "./types.js";

/**
 * Encodes an HWC 8-bit image as baseline JPEG at `quality` (1-100; vla-eval's codec uses 95).
 * Grey is expanded to RGB and alpha dropped: JPEG as upstream sends it carries RGB only.
 *
 * @example
 *   const bytes = encodeJpeg(obs.images.agentview, 95);
 */
export function encodeJpeg(image: Image, quality = 95): Buffer {
  const { width, height, channels, data } = image;
  if (![1, 3, 4].includes(channels) || data.length !== width * height * channels) {
    throw new ProvaelError("internal/invariant", "image does not match its declared shape", {
      details: { width, height, channels, bytes: data.length },
      hint: "expect width*height*channels bytes with 1, 3 or 4 channels",
    });
  }
  if (!(quality >= 1 && quality <= 100)) {
    throw new ProvaelError("internal/invariant", `JPEG quality ${quality} is outside 1-100`, {
      hint: "pass an integer quality between 1 and 100",
    });
  }
  const n = width * height;
  const rgba = new Uint8Array(n * 4);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < 3; k++)
      rgba[4 * i + k] = data[i * channels + (channels === 1 ? 0 : k)] ?? 0;
    rgba[4 * i + 3] = 255;
  }
  return jpeg.encode({ width, height, data: rgba }, Math.round(quality)).data;
}

/**
 * What a JPEG's start-of-frame segment declares, read without decoding any scan data; null when
 * the bytes are not a JPEG or end before a frame header.
 */
export function jpegHeader(
  bytes: Uint8Array,
): { width: number; height: number; components: number; progressive: boolean } | null {
  if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8) return null;
  let i = 2;
  while (i + 4 <= bytes.length) {
    if (bytes[i] !== 0xff) return null;
    const marker = bytes[i + 1] as number;
    // Fill bytes and standalone markers (TEM, RSTn) carry no length.
    if (marker === 0xff) {
      i += 1;
      continue;
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2;
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return null; // end of image / scan before any frame
    const length = ((bytes[i + 2] as number) << 8) | (bytes[i + 3] as number);
    if (length < 2) return null;
    // SOF0-SOF15 except DHT (C4), JPG (C8) and DAC (CC).
    const isFrame = marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker);
    if (isFrame) {
      if (i + 10 > bytes.length) return null;
      const height = ((bytes[i + 5] as number) << 8) | (bytes[i + 6] as number);
      const width = ((bytes[i + 7] as number) << 8) | (bytes[i + 8] as number);
      const components = bytes[i + 9] as number;
      return { width, height, components, progressive: marker === 0xc2 || marker === 0xc6 };
    }
    i += 2 + length;
  }
  return null;
}

/**
 * Decodes JPEG bytes into an HWC RGB image (grey JPEGs come back as three equal channels).
 * `maxPixels` bounds what the decoder may allocate; callers reading untrusted bytes check
 * `jpegHeader` first and charge their own budget.
 */
export function decodeJpeg(bytes: Uint8Array, maxPixels = 4096 * 4096): Image {
  const decoded = jpeg.decode(bytes, {
    useTArray: true,
    formatAsRGBA: false,
    maxResolutionInMP: maxPixels / 1e6,
    // Component buffers plus the output; jpeg-js counts both against this.
    maxMemoryUsageInMB: Math.ceil((maxPixels * 3 * 3) / (1024 * 1024)) + 16,
  });
  return { width: decoded.width, height: decoded.height, channels: 3, data: decoded.data };
}
