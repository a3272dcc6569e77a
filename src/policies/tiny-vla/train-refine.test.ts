import { describe, expect, it } from "vitest";
import { Rng } from "../../core/rng.js";
import { foldStandardisation, standardisation } from "./train-refine.js";

describe("the second look's standardisation", () => {
  it("gives each input's mean and spread, and never divides by a spread of zero", () => {
    // Three rows of three inputs: the last never varies (a patch feature that is always zero).
    const rows = Float32Array.from([1, 10, 0, 3, 10, 0, 5, 16, 0]);
    const { mean, spread } = standardisation(rows, 3);
    expect(Array.from(mean)).toEqual([3, 12, 0]);
    expect(spread[0]).toBeCloseTo(Math.sqrt(8 / 3), 6);
    expect(spread[1]).toBeCloseTo(Math.sqrt(8), 6);
    expect(spread[2]).toBe(Math.fround(0.01));
  });

  it("folds into a first layer that reads the raw inputs as the trained one read standardised ones", () => {
    const rng = Rng.fromLabel("fold");
    const F = 40;
    const H = 5;
    const mean = Float32Array.from({ length: F }, () => rng.uniform(-1, 2));
    const spread = Float32Array.from({ length: F }, () => rng.uniform(0.01, 3));
    const w = Float32Array.from({ length: F * H }, () => rng.uniform(-0.3, 0.3));
    const b = Float32Array.from({ length: H }, () => rng.uniform(-0.5, 0.5));
    const folded = foldStandardisation(w, b, mean, spread);
    for (let trial = 0; trial < 10; trial++) {
      const x = Array.from({ length: F }, () => rng.uniform(-2, 4));
      for (let h = 0; h < H; h++) {
        let standard = b[h] as number;
        let raw = folded.b[h] as number;
        for (let f = 0; f < F; f++) {
          const v = x[f] as number;
          standard +=
            ((v - (mean[f] as number)) / (spread[f] as number)) * (w[f * H + h] as number);
          raw += v * (folded.w[f * H + h] as number);
        }
        expect(raw).toBeCloseTo(standard, 3);
      }
    }
  });
});
