/**
 * Pixel transforms of `image_purifier`, each a pure function of an image (and of the draw that
 * sets its randomness), so that an adaptive attacker can run the same forward pass and the
 * adjoint of its geometric part.
 *
 * `jpegRoundTrip` is the lossy core of baseline JPEG (JFIF YCbCr, 4:2:0 chroma subsampling, 8x8
 * DCT-II, quantisation by the standard luminance and chrominance tables scaled by the quality as
 * libjpeg scales them). The entropy coding that a file would add is lossless and is left out: the
 * pixels that come back are those an encode-decode at that quality gives, up to rounding in the
 * colour conversion and the inverse DCT.
 */
import type { Image } from "../core/types.js";

/** Annex K.1 of ITU-T T.81: luminance quantisation table, row-major. */
const LUMA = [
  16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56,
  14, 17, 22, 29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113,
  92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99,
];
/** Annex K.1: chrominance quantisation table. */
const CHROMA = [
  17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99, 99, 99,
  47, 66, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
  99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
];

/** A table scaled for `quality` (1..100) the way libjpeg's `jpeg_quality_scaling` does. */
export function scaledTable(base: readonly number[], quality: number): number[] {
  const q = Math.max(1, Math.min(100, Math.round(quality)));
  const scale = q < 50 ? 5000 / q : 200 - 2 * q;
  return base.map((v) => Math.max(1, Math.min(255, Math.floor((v * scale + 50) / 100))));
}

/** cos((2x + 1) u π / 16) · c(u), the DCT-II basis of an 8-point block. */
const BASIS: Float64Array = (() => {
  const b = new Float64Array(64);
  for (let u = 0; u < 8; u++) {
    const c = u === 0 ? Math.SQRT1_2 : 1;
    for (let x = 0; x < 8; x++) b[u * 8 + x] = c * Math.cos(((2 * x + 1) * u * Math.PI) / 16);
  }
  return b;
})();

/** Quantises one 8x8 block in place: forward DCT, divide and round by `table`, inverse DCT. */
function quantiseBlock(block: Float64Array, table: readonly number[]): void {
  const coef = new Float64Array(64);
  const tmp = new Float64Array(64);
  // Separable 2-D DCT: rows, then columns; scale 1/4 makes it orthonormal.
  for (let y = 0; y < 8; y++)
    for (let u = 0; u < 8; u++) {
      let s = 0;
      for (let x = 0; x < 8; x++) s += (BASIS[u * 8 + x] as number) * (block[y * 8 + x] as number);
      tmp[y * 8 + u] = s;
    }
  for (let v = 0; v < 8; v++)
    for (let u = 0; u < 8; u++) {
      let s = 0;
      for (let y = 0; y < 8; y++) s += (BASIS[v * 8 + y] as number) * (tmp[y * 8 + u] as number);
      const q = table[v * 8 + u] as number;
      coef[v * 8 + u] = Math.round(s / 4 / q) * q;
    }
  for (let v = 0; v < 8; v++)
    for (let x = 0; x < 8; x++) {
      let s = 0;
      for (let u = 0; u < 8; u++) s += (BASIS[u * 8 + x] as number) * (coef[v * 8 + u] as number);
      tmp[v * 8 + x] = s;
    }
  for (let y = 0; y < 8; y++)
    for (let x = 0; x < 8; x++) {
      let s = 0;
      for (let v = 0; v < 8; v++) s += (BASIS[v * 8 + y] as number) * (tmp[v * 8 + x] as number);
      block[y * 8 + x] = s / 4;
    }
}

/** One plane (w x h) quantised block by block; edge blocks replicate the last row and column. */
function quantisePlane(plane: Float64Array, w: number, h: number, table: readonly number[]): void {
  const block = new Float64Array(64);
  for (let by = 0; by < h; by += 8)
    for (let bx = 0; bx < w; bx += 8) {
      for (let y = 0; y < 8; y++)
        for (let x = 0; x < 8; x++) {
          const sy = Math.min(h - 1, by + y);
          const sx = Math.min(w - 1, bx + x);
          block[y * 8 + x] = (plane[sy * w + sx] as number) - 128;
        }
      quantiseBlock(block, table);
      for (let y = 0; y < 8 && by + y < h; y++)
        for (let x = 0; x < 8 && bx + x < w; x++)
          plane[(by + y) * w + bx + x] = (block[y * 8 + x] as number) + 128;
    }
}

const clampByte = (v: number) => Math.max(0, Math.min(255, Math.round(v)));

/** The image after a JPEG encode-decode at `quality` (RGB only; other images pass unchanged). */
export function jpegRoundTrip(img: Image, quality: number): Image {
  if (img.channels !== 3) return img;
  const { width: w, height: h } = img;
  const cw = Math.ceil(w / 2);
  const ch = Math.ceil(h / 2);
  const Y = new Float64Array(w * h);
  const Cb = new Float64Array(cw * ch);
  const Cr = new Float64Array(cw * ch);
  const counts = new Float64Array(cw * ch);
  for (let i = 0; i < w * h; i++) {
    const r = img.data[i * 3] as number;
    const g = img.data[i * 3 + 1] as number;
    const b = img.data[i * 3 + 2] as number;
    Y[i] = 0.299 * r + 0.587 * g + 0.114 * b;
    // 4:2:0: each chroma sample is the mean of its 2x2 block.
    const c = Math.floor(Math.floor(i / w) / 2) * cw + Math.floor((i % w) / 2);
    Cb[c] = (Cb[c] as number) + (-0.168736 * r - 0.331264 * g + 0.5 * b + 128);
    Cr[c] = (Cr[c] as number) + (0.5 * r - 0.418688 * g - 0.081312 * b + 128);
    counts[c] = (counts[c] as number) + 1;
  }
  for (let c = 0; c < cw * ch; c++) {
    Cb[c] = (Cb[c] as number) / (counts[c] as number);
    Cr[c] = (Cr[c] as number) / (counts[c] as number);
  }
  quantisePlane(Y, w, h, scaledTable(LUMA, quality));
  const chromaTable = scaledTable(CHROMA, quality);
  quantisePlane(Cb, cw, ch, chromaTable);
  quantisePlane(Cr, cw, ch, chromaTable);
  const data = new Uint8Array(w * h * 3);
  for (let i = 0; i < w * h; i++) {
    const c = Math.floor(Math.floor(i / w) / 2) * cw + Math.floor((i % w) / 2);
    const y = Y[i] as number;
    const cb = (Cb[c] as number) - 128;
    const cr = (Cr[c] as number) - 128;
    data[i * 3] = clampByte(y + 1.402 * cr);
    data[i * 3 + 1] = clampByte(y - 0.344136 * cb - 0.714136 * cr);
    data[i * 3 + 2] = clampByte(y + 1.772 * cb);
  }
  return { ...img, data };
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
