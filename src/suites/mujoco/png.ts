/** PNG encoding of camera images, for pictures in reports and for debugging renders. */
import pngjs from "pngjs";
import { ProvaelError } from "../../core/errors.js";
import type { Image } from "../../core/types.js";

/**
 * Encodes an HWC 8-bit image (1 channel grey, 3 RGB or 4 RGBA) as PNG bytes.
 *
 * @example
 *   import { writeFileSync } from "node:fs";
 *   writeFileSync("/tmp/agentview.png", imageToPng(camera.render(data).rgb));
 */
export function imageToPng(image: Image): Buffer {
  const { width, height, channels, data } = image;
  if (![1, 3, 4].includes(channels) || data.length !== width * height * channels) {
    throw new ProvaelError("internal/invariant", "image does not match its declared shape", {
      details: { width, height, channels, bytes: data.length },
      hint: "expect width*height*channels bytes with 1, 3 or 4 channels",
    });
  }
  const png = new pngjs.PNG({ width, height });
  const out = png.data;
  for (let i = 0, n = width * height; i < n; i++) {
    const s = i * channels;
    const d = 4 * i;
    if (channels === 1) {
      const l = data[s]!;
      out[d] = l;
      out[d + 1] = l;
      out[d + 2] = l;
      out[d + 3] = 255;
    } else {
      out[d] = data[s]!;
      out[d + 1] = data[s + 1]!;
      out[d + 2] = data[s + 2]!;
      out[d + 3] = channels === 4 ? data[s + 3]! : 255;
    }
  }
  // Colour type 2 (RGB) keeps files small when there is no alpha to store.
  return pngjs.PNG.sync.write(png, { colorType: channels === 4 ? 6 : 2 });
}
