import { describe, expect, it } from "vitest";
import { BUNDLE_KEYFRAMES, keyframes } from "./bundle.js";

const steps = (n: number) => Array.from({ length: n }, (_, i) => i);

describe("keyframes: the frames a bundle keeps of an episode", () => {
  it("keeps every step of a short episode", () => {
    expect(keyframes(steps(10), [3])).toEqual(steps(10));
  });

  it("keeps at most the limit of a long one: first, last, each moment and the step before it, then evenly spaced", () => {
    const kept = keyframes(steps(300), [137, 200]);
    expect(kept).toHaveLength(BUNDLE_KEYFRAMES);
    for (const s of [0, 299, 136, 137, 199, 200]) expect(kept).toContain(s);
    expect(kept).toEqual([...kept].sort((a, b) => a - b));
    expect(new Set(kept).size).toBe(kept.length);
    // Evenly spaced around the moments: no gap wider than twice an even split's.
    const gaps = kept.slice(1).map((s, i) => s - (kept[i] as number));
    expect(Math.max(...gaps)).toBeLessThanOrEqual(Math.ceil((2 * 299) / (BUNDLE_KEYFRAMES - 1)));
  });

  it("takes a moment between saved steps at the latest step before it; ignores absent moments", () => {
    const saved = [0, 10, 20, 30, 40, 50, 60, 70, 80, 90];
    expect(keyframes(saved, [35, null, undefined], 4)).toEqual([0, 30, 60, 90]);
    expect(keyframes(saved, [35], 4)).toContain(30);
  });
});
