import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Rng } from "../core/rng.js";
import { anytimeInterval, anytimeLogMartingale } from "./anytime.js";
import { wilsonInterval } from "./wilson.js";

const counts = fc
  .integer({ min: 0, max: 10_000_000 })
  .chain((n) => fc.tuple(fc.integer({ min: 0, max: n }), fc.constant(n)));

describe("anytimeInterval", () => {
  it("contains the point estimate and stays in [0, 1]", () => {
    fc.assert(
      fc.property(counts, fc.double({ min: 1e-6, max: 0.5, noNaN: true }), ([s, n], alpha) => {
        const { low, high } = anytimeInterval(s, n, { alpha });
        const p = n === 0 ? 0.5 : s / n;
        return 0 <= low && low <= p && p <= high && high <= 1;
      }),
      { seed: 42, numRuns: 500 },
    );
  });

  it("has the martingale at 1/alpha on each open end", () => {
    fc.assert(
      fc.property(counts, ([s, n]) => {
        if (n === 0) return true;
        const { low, high } = anytimeInterval(s, n);
        const threshold = Math.log(20);
        const ends = [...(s > 0 ? [low] : []), ...(s < n ? [high] : [])];
        return ends.every((p) => {
          // Equal up to the rounding of ln M, whose size grows with n.
          const slack =
            1e-12 * Math.max(1, Math.abs(s * Math.log(p)) + Math.abs((n - s) * Math.log1p(-p)));
          return Math.abs(anytimeLogMartingale(p, s, n) - threshold) <= slack + 1e-9;
        });
      }),
      { seed: 42, numRuns: 300 },
    );
  });

  it("is the set { p : M_n(p) < 1/alpha }", () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 2000 })
          .chain((n) => fc.tuple(fc.integer({ min: 0, max: n }), fc.constant(n))),
        fc.double({ min: 0, max: 1, noNaN: true }),
        ([s, n], p) => {
          const { low, high } = anytimeInterval(s, n);
          const inside = anytimeLogMartingale(p, s, n) < Math.log(20);
          const margin = 1e-9;
          if (Math.abs(p - low) < margin || Math.abs(p - high) < margin) return true;
          return inside === (low <= p && p <= high);
        },
      ),
      { seed: 42, numRuns: 1000 },
    );
  });

  it("widens as alpha shrinks and is wider than Wilson at the same level from n = 10", () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 10, max: 1_000_000 })
          .chain((n) => fc.tuple(fc.integer({ min: 0, max: n }), fc.constant(n))),
        ([s, n]) => {
          const a05 = anytimeInterval(s, n, { alpha: 0.05 });
          const a01 = anytimeInterval(s, n, { alpha: 0.01 });
          const w = wilsonInterval(s, n, { confidence: 0.95 });
          return (
            a01.low <= a05.low && a05.high <= a01.high && a05.low <= w.low && w.high <= a05.high
          );
        },
      ),
      { seed: 42, numRuns: 300 },
    );
  });

  // Ville's inequality promises that a sequence leaves the interval at any time with probability at
  // most alpha; we check that at least 95% of simulated sequences never leave it up to n = 500.
  it("covers the true rate uniformly over time in >= 95% of simulated sequences", () => {
    const sequences = 300;
    const horizon = 500;
    fc.assert(
      fc.property(
        fc.double({ min: 0.02, max: 0.98, noNaN: true }),
        fc.integer({ min: 0, max: 1e9 }),
        (p, seed) => {
          const rng = Rng.fromLabel(`test:anytime-coverage:${p}:${seed}`);
          let covered = 0;
          for (let q = 0; q < sequences; q++) {
            let s = 0;
            let stayed = true;
            for (let n = 1; n <= horizon && stayed; n++) {
              if (rng.bernoulli(p)) s++;
              const { low, high } = anytimeInterval(s, n);
              stayed = low <= p && p <= high;
            }
            if (stayed) covered++;
          }
          return covered / sequences >= 0.95;
        },
      ),
      { seed: 42, numRuns: 5 },
    );
  });

  it("handles the edges", () => {
    expect(anytimeInterval(0, 0)).toEqual({ low: 0, high: 1 });
    expect(anytimeInterval(0, 10).low).toBe(0);
    expect(anytimeInterval(10, 10).high).toBe(1);
    // s = 0 has a closed form: 1 − (1 − p)^n = … gives p = 1 − exp(−ln((n + 1)/alpha) / n)... as
    // ln M = −ln(n + 1) − n ln(1 − p) = ln 20.
    const n = 1e7;
    const closed = -Math.expm1(-(Math.log(20) - Math.log(n + 1)) / n);
    expect(anytimeInterval(0, n).high).toBeCloseTo(closed, 15);
    const big = anytimeInterval(5e6, 1e7);
    expect(Number.isFinite(big.low) && Number.isFinite(big.high)).toBe(true);
    expect(big.low).toBeLessThan(0.5);
  });

  it("rejects bad input with a RangeError", () => {
    expect(() => anytimeInterval(2, 1)).toThrow(RangeError);
    expect(() => anytimeInterval(1, 2, { alpha: 0 })).toThrow(RangeError);
    expect(() => anytimeInterval(1, 2, { alpha: 1 })).toThrow(RangeError);
    expect(() => anytimeInterval(0.5, 2)).toThrow(RangeError);
    expect(() => anytimeLogMartingale(2, 1, 2)).toThrow(RangeError);
  });
});
