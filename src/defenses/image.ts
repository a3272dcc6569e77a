/**
 * Pixel transforms of `image_purifier`, each a pure function of an image (and of the draw that
 * sets its randomness), so that an adaptive attacker can run the same forward pass and the
 * adjoint of its geometric part.
 *
 * `jpegRoundTrip` is a real baseline-JPEG encode and decode at the given quality, through the
 * project's one JPEG codec (core/jpeg.ts over jpeg-js).
 */
import { decodeJpeg, encodeJpeg } from "../core/jpeg.js";
import type { Image } from "../core/types.js";

/** The image after a JPEG encode-decode at `quality` (RGB only; other images pass unchanged). */
export function jpegRoundTrip(img: Image, quality: number): Image {
  if (img.channels !== 3) return img;
  const back = decodeJpeg(encodeJpeg(img, quality));
  return { ...img, data: back.data };
}

/** A k x k median filter per channel (k odd), edges clamped. */
export function medianFilter(img: Image, k: number): Image {
  if (k <= 1) return img;
  const { width: w, height: h, channels: c } = img;
  const half = Math.floor(k / 2);
  const data = new Uint8Array(img.data.length);
  const window = new Uint8Array(k * k);
  const mid = Math.floor((k * k) / 2);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++)
      for (let ch = 0; ch < c; ch++) {
        let n = 0;
        for (let dy = -half; dy <= half; dy++) {
          const sy = Math.max(0, Math.min(h - 1, y + dy));
          for (let dx = -half; dx <= half; dx++) {
            const sx = Math.max(0, Math.min(w - 1, x + dx));
            window[n++] = img.data[(sy * w + sx) * c + ch] as number;
          }
        }
        window.sort();
        data[(y * w + x) * c + ch] = window[mid] as number;
      }
  return { ...img, data };
}

/** One draw of the random resize and pad: the shrunk size and where it sits. */
export interface ResizeDraw {
  width: number;
  height: number;
  x: number;
  y: number;
}

/** Draws a resize and pad for an image from `uniform` (a seeded generator's [0, 1) stream). */
export function drawResize(
  width: number,
  height: number,
  maxShrink: number,
  uniform: () => number,
): ResizeDraw {
  const scale = 1 - maxShrink * uniform();
  const nw = Math.max(1, Math.min(width, Math.round(width * scale)));
  const nh = Math.max(1, Math.min(height, Math.round(height * scale)));
  const x = Math.min(width - nw, Math.floor(uniform() * (width - nw + 1)));
  const y = Math.min(height - nh, Math.floor(uniform() * (height - nh + 1)));
  return { width: nw, height: nh, x, y };
}

/**
 * For each output pixel, the source pixel it samples (nearest neighbour), or -1 for padding: the
 * resize and pad is this linear map, and its adjoint sums gradients back through the same map.
 */
export function resizeMap(width: number, height: number, d: ResizeDraw): Int32Array {
  const map = new Int32Array(width * height).fill(-1);
  for (let y = 0; y < d.height; y++) {
    const sy = Math.min(height - 1, Math.floor(((y + 0.5) * height) / d.height));
    for (let x = 0; x < d.width; x++) {
      const sx = Math.min(width - 1, Math.floor(((x + 0.5) * width) / d.width));
      map[(d.y + y) * width + d.x + x] = sy * width + sx;
    }
  }
  return map;
}

/** The image resized into the draw's box and padded with `fill` (same size as the input). */
export function applyResize(img: Image, map: Int32Array, fill: number): Image {
  const c = img.channels;
  const data = new Uint8Array(img.data.length).fill(fill);
  for (let i = 0; i < map.length; i++) {
    const s = map[i] as number;
    if (s < 0) continue;
    for (let k = 0; k < c; k++) data[i * c + k] = img.data[s * c + k] as number;
  }
  return { ...img, data };
}

/** The adjoint of `applyResize` on an HWC float gradient: each source pixel sums what sampled it. */
export function resizeAdjoint(grad: Float32Array, map: Int32Array, channels: number): Float32Array {
  const out = new Float32Array(grad.length);
  for (let i = 0; i < map.length; i++) {
    const s = map[i] as number;
    if (s < 0) continue;
    for (let k = 0; k < channels; k++)
      out[s * channels + k] =
        (out[s * channels + k] as number) + (grad[i * channels + k] as number);
  }
  return out;
}

/** What `image_purifier` does to one image, in order; zero or one turns a stage off. */
export interface PurifierSettings {
  jpeg_quality: number;
  median: number;
  max_shrink: number;
  fill: number;
}

/** The purified image and the resize map it used (null when the resize stage is off). */
export function purifyImage(
  img: Image,
  s: PurifierSettings,
  uniform: () => number,
): { image: Image; map: Int32Array | null } {
  let out = img;
  if (s.jpeg_quality > 0) out = jpegRoundTrip(out, s.jpeg_quality);
  if (s.median > 1) out = medianFilter(out, s.median);
  if (s.max_shrink <= 0) return { image: out, map: null };
  const map = resizeMap(
    img.width,
    img.height,
    drawResize(img.width, img.height, s.max_shrink, uniform),
  );
  return { image: applyResize(out, map, s.fill), map };
}
