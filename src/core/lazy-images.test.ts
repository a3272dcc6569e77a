import { describe, expect, it } from "vitest";
import { isRendered, lazyImages } from "./lazy-images.js";
import type { Image } from "./types.js";

const frame = (v: number): Image => ({
  width: 1,
  height: 1,
  channels: 3,
  data: Uint8Array.of(v, v, v),
});

describe("lazyImages", () => {
  it("renders a camera only when read, once, and says which were read", () => {
    const calls: string[] = [];
    const images = lazyImages(
      ["a", "b"],
      (cam) => {
        calls.push(cam);
        return frame(cam === "a" ? 1 : 2);
      },
      () => true,
    );
    expect(Object.keys(images)).toEqual(["a", "b"]);
    expect(calls).toEqual([]);
    expect(isRendered(images, "a")).toBe(false);
    expect(images.a?.data[0]).toBe(1);
    expect(images.a?.data[0]).toBe(1);
    expect(calls).toEqual(["a"]);
    expect(isRendered(images, "a")).toBe(true);
    expect(isRendered(images, "b")).toBe(false);
    // A spread copy reads every camera: the copy is plain and safe to keep.
    const copy = { ...images };
    expect(calls).toEqual(["a", "b"]);
    expect(isRendered(copy, "b")).toBe(true);
  });

  it("refuses to render a frame after the simulator moved on", () => {
    let now = 0;
    const at = now;
    const images = lazyImages(
      ["a"],
      () => frame(0),
      () => now === at,
    );
    now = 1;
    expect(() => images.a).toThrow(/stepped past/);
  });

  it("treats plain records as rendered", () => {
    expect(isRendered({ a: frame(3) }, "a")).toBe(true);
  });
});
