import { describe, expect, it } from "vitest";
import { FrameStore, framesPerBlock } from "./frame-store.js";

describe("FrameStore", () => {
  it("holds frames in blocks and gives back each one whole, wherever its block ends", () => {
    const store = FrameStore.alloc(10, 3, 4);
    expect(store.blocks.map((b) => b.length)).toEqual([12, 12, 6]);
    for (let i = 0; i < 10; i++) store.set(i, Uint8Array.of(i, i + 100, i + 200));
    for (let i = 0; i < 10; i++) expect(Array.from(store.frame(i))).toEqual([i, i + 100, i + 200]);
    expect(store.byteLength).toBe(30);
    // The same frames back to back, however blocked.
    const flat = Uint8Array.from(store.blocks.flatMap((b) => Array.from(b)));
    const one = FrameStore.of(flat, 3);
    expect(one.blocks).toHaveLength(1);
    expect(Array.from({ length: 10 }, (_, i) => Array.from(one.frame(i)))).toEqual(
      Array.from({ length: 10 }, (_, i) => Array.from(store.frame(i))),
    );
  });

  it("keeps a block at 1 GiB, so 400,000 frames of 64 px fit in Node's typed arrays", () => {
    const px = 64 * 64 * 3;
    expect(framesPerBlock(px) * px).toBeLessThanOrEqual(2 ** 30);
    expect(Math.ceil(400_000 / framesPerBlock(px))).toBe(5);
  });

  it("refuses a frame outside the store, a wrong-sized frame and a ragged array", () => {
    const store = FrameStore.alloc(2, 4);
    expect(() => store.frame(2)).toThrow(/outside 0\.\.1/);
    expect(() => store.frame(-1)).toThrow(RangeError);
    expect(() => store.set(0, new Uint8Array(3))).toThrow(/4 bytes, not 3/);
    expect(() => FrameStore.of(new Uint8Array(7), 4)).toThrow(/not whole frames/);
  });
});
