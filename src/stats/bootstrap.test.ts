import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type ClusterCounts, clusterBootstrapInterval, type7Quantile } from "./bootstrap.js";

const clusterList = fc.array(
  fc
    .integer({ min: 0, max: 200 })
    .chain((n) => fc.record({ successes: fc.integer({ min: 0, max: n }), n: fc.constant(n) })),
  { minLength: 0, maxLength: 25 },
);

const tasks: ClusterCounts[] = [
  { successes: 3, n: 10 },
  { successes: 7, n: 10 },
  { successes: 5, n: 12 },
  { successes: 0, n: 8 },
  { successes: 9, n: 9 },
];

afterEach(() => {
  vi.restoreAllMocks();
});

describe("clusterBootstrapInterval", () => {
  it("is reproducible for a seed and uses only the project generator", () => {
    const random = vi.spyOn(Math, "random").mockImplementation(() => {
      throw new Error("Math.random must not be used");
    });
    const a = clusterBootstrapInterval(tasks, { seed: 7 });
    const b = clusterBootstrapInterval(tasks, { seed: 7 });
    const c = clusterBootstrapInterval(tasks, { seed: "7" });
    expect(a).toEqual(b);
    // The generator label is `bootstrap:${seed}`, so 7 and "7" name the same stream.
    expect(a).toEqual(c);
    expect(random).not.toHaveBeenCalled();
    // With few clusters the quantiles can coincide across seeds; twenty varied ones do not.
    const many = Array.from({ length: 20 }, (_, i) => ({ successes: (i * 7) % 23, n: 23 + i }));
    expect(clusterBootstrapInterval(many, { seed: 8 })).not.toEqual(
      clusterBootstrapInterval(many, { seed: 7 }),
    );
  });

  it("lies within the range of cluster rates and around the pooled rate", () => {
    fc.assert(
      fc.property(clusterList, fc.integer(), (clusters, seed) => {
        const ci = clusterBootstrapInterval(clusters, { seed, resamples: 200 });
        const kept = clusters.filter((c) => c.n > 0);
        if (ci === null) return true;
        const rates = kept.map((c) => c.successes / c.n);
        return (
          Math.min(...rates) <= ci.low &&
          ci.low <= ci.high &&
          ci.high <= Math.max(...rates) &&
          kept.length >= 2
        );
      }),
      { seed: 42, numRuns: 300 },
    );
  });

  it("widens with the confidence level", () => {
    const narrow = clusterBootstrapInterval(tasks, { seed: 1, confidence: 0.5 });
    const wide = clusterBootstrapInterval(tasks, { seed: 1, confidence: 0.99 });
    expect(narrow).not.toBeNull();
    expect(wide).not.toBeNull();
    if (narrow === null || wide === null) return;
    expect(wide.low).toBeLessThanOrEqual(narrow.low);
    expect(wide.high).toBeGreaterThanOrEqual(narrow.high);
  });

  it("returns null with fewer than two clusters or when all rates agree", () => {
    expect(clusterBootstrapInterval([], { seed: 1 })).toBeNull();
    expect(clusterBootstrapInterval([{ successes: 1, n: 3 }], { seed: 1 })).toBeNull();
    expect(
      clusterBootstrapInterval(
        [
          { successes: 1, n: 3 },
          { successes: 0, n: 0 },
        ],
        { seed: 1 },
      ),
    ).toBeNull();
    expect(
      clusterBootstrapInterval(
        [
          { successes: 1, n: 3 },
          { successes: 2, n: 6 },
          { successes: 3, n: 9 },
        ],
        { seed: 1 },
      ),
    ).toBeNull();
  });

  it("rejects bad input with a RangeError", () => {
    expect(() => clusterBootstrapInterval([{ successes: 4, n: 3 }], { seed: 1 })).toThrow(
      RangeError,
    );
    expect(() => clusterBootstrapInterval(tasks, { seed: 1, resamples: 0 })).toThrow(RangeError);
    expect(() => clusterBootstrapInterval(tasks, { seed: 1, resamples: 1.5 })).toThrow(RangeError);
    expect(() => clusterBootstrapInterval(tasks, { seed: 1, confidence: 1 })).toThrow(RangeError);
  });
});

describe("type7Quantile", () => {
  it("interpolates between order statistics like R's and numpy's default", () => {
    const xs = Float64Array.of(1, 2, 3, 4);
    expect(type7Quantile(xs, 0)).toBe(1);
    expect(type7Quantile(xs, 1)).toBe(4);
    expect(type7Quantile(xs, 0.5)).toBe(2.5);
    // numpy.quantile([1, 2, 3, 4], 0.025) = 1 + 0.075 · (2 − 1)
    expect(type7Quantile(xs, 0.025)).toBeCloseTo(1.075, 15);
    expect(type7Quantile(Float64Array.of(5), 0.3)).toBe(5);
    expect(() => type7Quantile(new Float64Array(0), 0.5)).toThrow(RangeError);
    expect(() => type7Quantile(xs, 1.5)).toThrow(RangeError);
  });
});
