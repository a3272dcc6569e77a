import { describe, expect, it } from "vitest";
import { imageShape, isRendered, lazyImages, withDerivedImage } from "./lazy-images.js";
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

describe("withDerivedImage", () => {
  it("derives a camera from the source on first read, once, and reads the others through", () => {
    const calls: string[] = [];
    const shape = { width: 1, height: 1, channels: 3 };
    const source = lazyImages(
      ["a", "b"],
      (cam) => {
        calls.push(cam);
        return frame(cam === "a" ? 1 : 2);
      },
      () => true,
      undefined,
      { a: shape, b: shape },
    );
    let derived = 0;
    const out = withDerivedImage(source, "a", (img) => {
      derived += 1;
      return { ...img, data: img.data.map((v) => v + 10) };
    });
    expect(Object.keys(out)).toEqual(["a", "b"]);
    expect(imageShape(out, "a")).toEqual(shape);
    expect(calls).toEqual([]);
    expect(isRendered(out, "a")).toBe(false);
    expect(out.a?.data[0]).toBe(11);
    expect(out.a?.data[0]).toBe(11);
    expect([calls, derived]).toEqual([["a"], 1]);
    expect(isRendered(out, "a")).toBe(true);
    expect(isRendered(out, "b")).toBe(false);
    // Read through: the source's own image, rendered once for both records.
    expect(out.b).toBe(source.b);
    expect(calls).toEqual(["a", "b"]);
    expect(source.a?.data[0]).toBe(1);
  });

  it("knows shapes without rendering, and refuses a render that breaks its declared shape", () => {
    const images = lazyImages(
      ["a"],
      () => ({ width: 2, height: 1, channels: 3, data: new Uint8Array(6) }),
      () => true,
      undefined,
      { a: { width: 1, height: 1, channels: 3 } },
    );
    expect(imageShape(images, "a")).toEqual({ width: 1, height: 1, channels: 3 });
    expect(isRendered(images, "a")).toBe(false);
    expect(() => images.a).toThrow(/not the declared 1x1x3/);
    expect(imageShape({ a: frame(1) }, "a")).toEqual({ width: 1, height: 1, channels: 3 });
    expect(imageShape({ a: frame(1) }, "z")).toBeUndefined();
  });
});
