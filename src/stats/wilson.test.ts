import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Rng } from "../core/rng.js";
import { normalQuantile } from "./normal.js";
import { wilsonInterval } from "./wilson.js";

const counts = fc
  .integer({ min: 0, max: 100_000 })
  .chain((n) => fc.tuple(fc.integer({ min: 0, max: n }), fc.constant(n)));

describe("normalQuantile", () => {
  it("is odd, increasing and exact at the usual levels", () => {
    expect(normalQuantile(0.5)).toBe(0);
    expect(normalQuantile(0.975)).toBeCloseTo(1.959963984540054, 15);
    expect(normalQuantile(0)).toBe(Number.NEGATIVE_INFINITY);
    expect(normalQuantile(1)).toBe(Number.POSITIVE_INFINITY);
    fc.assert(
      fc.property(
        fc.double({ min: 1e-300, max: 1, noNaN: true }),
        fc.double({ min: 1e-300, max: 1, noNaN: true }),
        (p, q) => (p <= q ? normalQuantile(p) <= normalQuantile(q) : true),
      ),
      { seed: 42, numRuns: 500 },
    );
    // 1 − p is rounded, so the mirror image is exact only to the rounding of the tail area.
    fc.assert(
      fc.property(fc.double({ min: 1e-6, max: 0.5, noNaN: true }), (p) => {
        return Math.abs(normalQuantile(p) + normalQuantile(1 - p)) <= 1e-9;
      }),
      { seed: 42, numRuns: 500 },
    );
    expect(() => normalQuantile(1.1)).toThrow(RangeError);
  });
});

describe("wilsonInterval", () => {
  it("contains the point estimate and stays in [0, 1]", () => {
    fc.assert(
      fc.property(
        counts,
        fc.double({ min: 0.5, max: 0.9999, noNaN: true }),
        ([s, n], confidence) => {
          const { low, high } = wilsonInterval(s, n, { confidence });
          const p = n === 0 ? 0.5 : s / n;
          return 0 <= low && low <= p && p <= high && high <= 1;
        },
      ),
      { seed: 42, numRuns: 1000 },
    );
  });

  it("widens as the confidence grows", () => {
    fc.assert(
      fc.property(
        counts,
        fc.double({ min: 0.5, max: 0.99, noNaN: true }),
        fc.double({ min: 0.5, max: 0.99, noNaN: true }),
        ([s, n], c1, c2) => {
          const [lo, hi] = c1 <= c2 ? [c1, c2] : [c2, c1];
          const narrow = wilsonInterval(s, n, { confidence: lo });
          const wide = wilsonInterval(s, n, { confidence: hi });
          return wide.low <= narrow.low && narrow.high <= wide.high;
        },
      ),
      { seed: 42, numRuns: 500 },
    );
  });

  it("moves up with the success count", () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 10_000 })
          .chain((n) => fc.tuple(fc.integer({ min: 0, max: n - 1 }), fc.constant(n))),
        ([s, n]) => {
          const a = wilsonInterval(s, n);
          const b = wilsonInterval(s + 1, n);
          return a.low <= b.low && a.high <= b.high;
        },
      ),
      { seed: 42, numRuns: 500 },
    );
  });

  // Wilson's pointwise coverage oscillates with p and dips to about 0.92 at some (n, p), even for
  // n >= 20 (Brown, Cai and DasGupta, 2001); what holds is coverage averaged over the true rate,
  // which is ~0.95. Each simulated data set therefore draws its own rate uniformly from (0, 1).
  it("covers the true rate in at least 93% of simulated data sets for n >= 20", () => {
    const dataSets = 2000;
    fc.assert(
      fc.property(
        fc.integer({ min: 20, max: 200 }),
        fc.integer({ min: 0, max: 1e9 }),
        (n, seed) => {
          const rng = Rng.fromLabel(`test:wilson-coverage:${n}:${seed}`);
          let covered = 0;
          for (let d = 0; d < dataSets; d++) {
            const p = rng.float();
            let s = 0;
            for (let i = 0; i < n; i++) if (rng.bernoulli(p)) s++;
            const { low, high } = wilsonInterval(s, n);
            if (low <= p && p <= high) covered++;
          }
          return covered / dataSets >= 0.93;
        },
      ),
      { seed: 42, numRuns: 20 },
    );
  });

  it("handles the edges exactly", () => {
    expect(wilsonInterval(0, 0)).toEqual({ low: 0, high: 1 });
    expect(wilsonInterval(0, 10).low).toBe(0);
    expect(wilsonInterval(10, 10).high).toBe(1);
    const big = wilsonInterval(5_000_000, 10_000_000);
    expect(big.low).toBeLessThan(0.5);
    expect(big.high).toBeGreaterThan(0.5);
    expect(big.high - big.low).toBeCloseTo(2 * 1.959963984540054 * Math.sqrt(0.25 / 1e7), 8);
  });

  it("rejects bad input with a RangeError", () => {
    expect(() => wilsonInterval(3, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(-1, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(1.5, 2)).toThrow(RangeError);
    expect(() => wilsonInterval(1, Number.NaN)).toThrow(RangeError);
    expect(() => wilsonInterval(1, 2, { confidence: 1 })).toThrow(RangeError);
    expect(() => wilsonInterval(1, 2, { confidence: 0 })).toThrow(RangeError);
  });
});
