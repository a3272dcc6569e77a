/** Image transforms a layout applies on the way out and undoes on the way in. */
import type { Image } from "../../core/types.js";

export type ResizeMethod = "nearest" | "bilinear";

/** When a 180° rotation happens relative to the resize (they do not commute exactly). */
export type Rotation = "none" | "before" | "after";

/** Source index along one axis for each destination index (nearest sample at pixel centres). */
function nearestMap(src: number, dst: number, rotation: Rotation): Int32Array {
  const out = new Int32Array(dst);
  const s = src / dst;
  const at = (i: number) => Math.min(src - 1, Math.floor((i + 0.5) * s));
  for (let i = 0; i < dst; i++) {
    out[i] =
      rotation === "before" ? src - 1 - at(i) : rotation === "after" ? at(dst - 1 - i) : at(i);
  }
  return out;
}

/**
 * Resizes an HWC image and rotates it by 180° before or after, in one pass. Nearest sampling at
 * pixel centres is exactly undone by resizing back whenever the first resize enlarges
 * (128 -> 224 -> 128), which keeps served and in-process runs identical.
 *
 * @example
 *   transform(img, 224, 224, "nearest", "after"); // what the LIBERO layout sends
 */
export function transform(
  img: Image,
  width: number,
  height: number,
  method: ResizeMethod,
  rotation: Rotation,
): Image {
  if (img.width === width && img.height === height && rotation === "none") return img;
  if (method === "bilinear" && (img.width !== width || img.height !== height)) {
    const src = rotation === "before" ? rotate180(img) : img;
    const r = resizeBilinear(src, width, height);
    return rotation === "after" ? rotate180(r) : r;
  }
  const c = img.channels;
  const out = new Uint8Array(width * height * c);
  const xs = nearestMap(img.width, width, rotation);
  const ys = nearestMap(img.height, height, rotation);
  const src = img.data;
  let d = 0;
  const rowBytes = width * c;
  for (let y = 0; y < height; y++) {
    // Enlarging repeats source rows: copy the row just written instead of sampling it again.
    if (y > 0 && ys[y] === ys[y - 1]) {
      out.copyWithin(d, d - rowBytes, d);
      d += rowBytes;
      continue;
    }
    const row = (ys[y] as number) * img.width;
    if (c === 3) {
      for (let x = 0; x < width; x++) {
        const s = (row + (xs[x] as number)) * 3;
        out[d] = src[s] as number;
        out[d + 1] = src[s + 1] as number;
        out[d + 2] = src[s + 2] as number;
        d += 3;
      }
    } else {
      for (let x = 0; x < width; x++) {
        const s = (row + (xs[x] as number)) * c;
        for (let k = 0; k < c; k++) out[d++] = src[s + k] as number;
      }
    }
  }
  return { width, height, channels: c, data: out };
}

/** Resizes an HWC image. */
export function resize(img: Image, width: number, height: number, method: ResizeMethod): Image {
  return transform(img, width, height, method, "none");
}

/** Rotates by 180° (both axes flipped), as the LIBERO examples do: its own inverse. */
export function rotate180(img: Image): Image {
  return transform(img, img.width, img.height, "nearest", "after");
}

function resizeBilinear(img: Image, width: number, height: number): Image {
  const c = img.channels;
  const out = new Uint8Array(width * height * c);
  const sx = img.width / width;
  const sy = img.height / height;
  const p = (yy: number, xx: number, k: number) => img.data[(yy * img.width + xx) * c + k] ?? 0;
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
        const top = p(y0, x0, k) * (1 - wx) + p(y0, x1, k) * wx;
        const bottom = p(y1, x0, k) * (1 - wx) + p(y1, x1, k) * wx;
        out[d + k] = Math.round(top * (1 - wy) + bottom * wy);
      }
    }
  }
  return { width, height, channels: c, data: out };
}

/** HWC bytes to CHW bytes. */
export function toChw(img: Image): Uint8Array {
  const { width: w, height: h, channels: c } = img;
  const out = new Uint8Array(w * h * c);
  for (let i = 0; i < w * h; i++)
    for (let k = 0; k < c; k++) out[k * w * h + i] = img.data[i * c + k] as number;
  return out;
}

/** CHW bytes to an HWC image. */
export function fromChw(data: Uint8Array, channels: number, height: number, width: number): Image {
  const out = new Uint8Array(width * height * channels);
  for (let i = 0; i < width * height; i++)
    for (let k = 0; k < channels; k++)
      out[i * channels + k] = data[k * width * height + i] as number;
  return { width, height, channels, data: out };
}

const blanks = new Map<string, Image>();

/** An all-zero image, shared: callers only read it. */
export function blank(width: number, height: number, channels = 3): Image {
  const key = `${width}x${height}x${channels}`;
  let b = blanks.get(key);
  if (!b) {
    b = { width, height, channels, data: new Uint8Array(width * height * channels) };
    blanks.set(key, b);
  }
  return b;
}
