/** Image transforms a layout applies on the way out and undoes on the way in. */
import type { Image } from "../../core/types.js";

export type ResizeMethod = "nearest" | "bilinear";

/**
 * Resizes an HWC image. Nearest sampling at pixel centres is exactly undone by resizing back
 * whenever the first resize enlarges (128 -> 224 -> 128), which keeps served and in-process runs
 * identical.
 *
 * @example
 *   resize(img, 224, 224, "nearest");
 */
export function resize(img: Image, width: number, height: number, method: ResizeMethod): Image {
  if (img.width === width && img.height === height) return img;
  const c = img.channels;
  const out = new Uint8Array(width * height * c);
  const sx = img.width / width;
  const sy = img.height / height;
  if (method === "nearest" || img.width === 0 || img.height === 0) {
    for (let y = 0; y < height; y++) {
      const yy = Math.min(img.height - 1, Math.floor((y + 0.5) * sy));
      for (let x = 0; x < width; x++) {
        const xx = Math.min(img.width - 1, Math.floor((x + 0.5) * sx));
        const s = (yy * img.width + xx) * c;
        const d = (y * width + x) * c;
        for (let k = 0; k < c; k++) out[d + k] = img.data[s + k] ?? 0;
      }
    }
    return { width, height, channels: c, data: out };
  }
  for (let y = 0; y < height; y++) {
    const fy = Math.max(0, Math.min(img.height - 1, (y + 0.5) * sy - 0.5));
    const y0 = Math.floor(fy);
    const y1 = Math.min(img.height - 1, y0 + 1);
    const wy = fy - y0;
    for (let x = 0; x < width; x++) {
      const fx = Math.max(0, Math.min(img.width - 1, (x + 0.5) * sx - 0.5));
      const x0 = Math.floor(fx);
      const x1 = Math.min(img.width - 1, x0 + 1);
      const wx = fx - x0;
      const d = (y * width + x) * c;
      for (let k = 0; k < c; k++) {
        const p = (yy: number, xx: number) => img.data[(yy * img.width + xx) * c + k] ?? 0;
        const top = p(y0, x0) * (1 - wx) + p(y0, x1) * wx;
        const bottom = p(y1, x0) * (1 - wx) + p(y1, x1) * wx;
        out[d + k] = Math.round(top * (1 - wy) + bottom * wy);
      }
    }
  }
  return { width, height, channels: c, data: out };
}

/** Rotates by 180° (both axes flipped), as the LIBERO examples do: its own inverse. */
export function rotate180(img: Image): Image {
  const c = img.channels;
  const n = img.width * img.height;
  const out = new Uint8Array(img.data.length);
  for (let i = 0; i < n; i++) {
    const s = i * c;
    const d = (n - 1 - i) * c;
    for (let k = 0; k < c; k++) out[d + k] = img.data[s + k] ?? 0;
  }
  return { ...img, data: out };
}

/** HWC bytes to CHW bytes. */
export function toChw(img: Image): Uint8Array {
  const { width: w, height: h, channels: c } = img;
  const out = new Uint8Array(w * h * c);
  for (let i = 0; i < w * h; i++)
    for (let k = 0; k < c; k++) out[k * w * h + i] = img.data[i * c + k] ?? 0;
  return out;
}

/** CHW bytes to an HWC image. */
export function fromChw(data: Uint8Array, channels: number, height: number, width: number): Image {
  const out = new Uint8Array(width * height * channels);
  for (let i = 0; i < width * height; i++)
    for (let k = 0; k < channels; k++) out[i * channels + k] = data[k * width * height + i] ?? 0;
  return { width, height, channels, data: out };
}

export function blank(width: number, height: number, channels = 3): Image {
  return { width, height, channels, data: new Uint8Array(width * height * channels) };
}
