import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../test/support/tmp.js";
import { decodePng } from "../core/png.js";
import type { Image } from "../core/types.js";
import { Keyframes, MAX_KEPT, MAX_SIDE, shrink } from "./keyframes.js";

/** A frame whose every pixel holds its step (mod 256), so a kept frame names its step. */
const frame = (step: number, side = 256): Image => ({
  width: side,
  height: side,
  channels: 3,
  data: new Uint8Array(side * side * 3).fill(step % 256),
});

const CELL = "c0123456789abcdef0123";

describe("bridged keyframes", () => {
  it("keeps evenly strided steps and the last, at most MAX_KEPT + 1, whatever the length", () => {
    for (const length of [1, 5, 9, 37, 220, 520]) {
      const k = new Keyframes();
      for (let s = 0; s < length; s++) k.offer(s, { agentview: frame(s), wrist: frame(s) });
      const steps = k.frames().map(([s]) => s);
      expect(steps[0]).toBe(0);
      expect(steps.at(-1)).toBe(length - 1);
      expect(steps.length).toBeLessThanOrEqual(MAX_KEPT + 1);
      expect(steps.length).toBeGreaterThanOrEqual(Math.min(length, MAX_KEPT / 2));
      // One stride between the strided steps.
      const strided = steps.slice(0, -1);
      const gaps = new Set(strided.slice(1).map((s, i) => s - (strided[i] as number)));
      expect(gaps.size).toBeLessThanOrEqual(1);
    }
  });

  it("leaves out a frame that will not decode, without throwing (it is kept after the reply)", () => {
    // A lazily decoded PNG whose data is corrupt throws when its pixels are first read.
    const corrupt = {
      width: 256,
      height: 256,
      channels: 3,
      get data(): Uint8Array {
        throw new Error("bad PNG data");
      },
    } as Image;
    const k = new Keyframes();
    k.offer(0, { agentview: frame(0) });
    expect(() => k.offer(1, { agentview: corrupt })).not.toThrow();
    k.offer(2, { agentview: frame(2) });
    expect(k.frames().map(([s]) => s)).toEqual([0, 2]);
    // The last step is corrupt too: the frames end at the last one that decodes.
    k.offer(3, { agentview: corrupt });
    expect(k.frames().map(([s]) => s)).toEqual([0, 2]);
  });

  it("shrinks by an integer box mean to at most MAX_SIDE a side, and leaves small frames alone", () => {
    const big = shrink(frame(7, 256));
    expect([big.width, big.height]).toEqual([MAX_SIDE, MAX_SIDE]);
    expect(big.data.every((v) => v === 7)).toBe(true);
    const odd = shrink({ width: 300, height: 200, channels: 3, data: new Uint8Array(180000) });
    expect([odd.width, odd.height]).toEqual([100, 66]);
    const small = frame(3, 64);
    expect(shrink(small)).toEqual(small);
  });

  it("writes <camera>-<step>.png the viewer lists, replacing an earlier attempt's frames", () => {
    const dir = tempDir();
    const stale = join(dir, "frames", CELL);
    mkdirSync(stale, { recursive: true });
    writeFileSync(join(stale, "agentview-0099.png"), "stale");
    const k = new Keyframes();
    for (let s = 0; s < 3; s++) k.offer(s, { agentview: frame(s * 10), "bad name": frame(0) });
    expect(k.write(dir, CELL)).toBe(3);
    expect(readdirSync(stale).sort()).toEqual([
      "agentview-0000.png",
      "agentview-0001.png",
      "agentview-0002.png",
    ]);
    const png = decodePng(readFileSync(join(stale, "agentview-0002.png")));
    expect([png.width, png.height, png.data[0]]).toEqual([MAX_SIDE, MAX_SIDE, 20]);
  });
});
