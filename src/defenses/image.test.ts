import { describe, expect, it } from "vitest";
import { Rng } from "../core/rng.js";
import type { Image } from "../core/types.js";
import {
  applyResize,
  drawResize,
  jpegRoundTrip,
  medianFilter,
  purifyImage,
  resizeAdjoint,
  resizeMap,
} from "./image.js";

function noiseImage(w: number, h: number, seed: string): Image {
  const rng = Rng.fromLabel(seed);
  return {
    width: w,
    height: h,
    channels: 3,
    data: Uint8Array.from({ length: w * h * 3 }, () => rng.int(256)),
  };
}
const meanAbs = (a: Uint8Array, b: Uint8Array) =>
  a.reduce((s, v, i) => s + Math.abs(v - (b[i] as number)), 0) / a.length;

describe("image purifier transforms", () => {
  it("JPEG at low quality removes high-frequency noise; at 100 it keeps the image close", () => {
    const img = noiseImage(32, 32, "jpeg");
    const q10 = jpegRoundTrip(img, 10);
    const q100 = jpegRoundTrip(img, 100);
    expect(q10.data.length).toBe(img.data.length);
    expect(meanAbs(q100.data, img.data)).toBeLessThan(4);
    expect(meanAbs(q10.data, img.data)).toBeGreaterThan(20);
    // Deterministic.
    expect(Buffer.compare(jpegRoundTrip(img, 10).data, q10.data)).toBe(0);
  });

  it("a 3x3 median removes an isolated bright pixel and keeps a flat image", () => {
    const flat: Image = { width: 8, height: 8, channels: 3, data: new Uint8Array(192).fill(90) };
    const spiked = { ...flat, data: Uint8Array.from(flat.data) };
    spiked.data.set([255, 255, 255], (3 * 8 + 3) * 3);
    expect(Array.from(medianFilter(spiked, 3).data)).toEqual(Array.from(flat.data));
    expect(medianFilter(flat, 1)).toBe(flat);
  });

  it("the random resize and pad keeps the size, pads with the fill and draws inside the image", () => {
    const img = noiseImage(20, 16, "resize");
    const rng = Rng.fromLabel("draw");
    for (let k = 0; k < 50; k++) {
      const d = drawResize(20, 16, 0.3, () => rng.float());
      expect(d.width).toBeLessThanOrEqual(20);
      expect(d.width).toBeGreaterThanOrEqual(14);
      expect(d.x + d.width).toBeLessThanOrEqual(20);
      expect(d.y + d.height).toBeLessThanOrEqual(16);
    }
    const map = resizeMap(20, 16, { width: 15, height: 12, x: 3, y: 2 });
    const out = applyResize(img, map, 127);
    expect(out.data.length).toBe(img.data.length);
    expect(Array.from(out.data.subarray(0, 3))).toEqual([127, 127, 127]);
  });

  it("the resize adjoint is the transpose of the resize: <A x, y> = <x, Aᵀ y>", () => {
    const map = resizeMap(12, 10, { width: 9, height: 8, x: 1, y: 2 });
    const rng = Rng.fromLabel("adjoint");
    const x = Float32Array.from({ length: 12 * 10 * 3 }, () => rng.normal());
    const y = Float32Array.from({ length: 12 * 10 * 3 }, () => rng.normal());
    let ax = 0;
    for (let i = 0; i < map.length; i++) {
      const s = map[i] as number;
      if (s < 0) continue;
      for (let k = 0; k < 3; k++) ax += (x[s * 3 + k] as number) * (y[i * 3 + k] as number);
    }
    const aty = resizeAdjoint(y, map, 3);
    const xaty = x.reduce((s, v, i) => s + v * (aty[i] as number), 0);
    expect(xaty).toBeCloseTo(ax, 4);
  });

  it("stages turn off at 0: an all-off purifier returns the image unchanged", () => {
    const img = noiseImage(8, 8, "off");
    const out = purifyImage(img, { jpeg_quality: 0, median: 0, max_shrink: 0, fill: 0 }, () => 0);
    expect(out.image).toBe(img);
    expect(out.map).toBeNull();
  });
});
