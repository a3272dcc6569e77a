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

  it("puts each open end on the boundary M_n(p) = 1/alpha", () => {
    const threshold = Math.log(20);
    fc.assert(
      fc.property(counts, ([s, n]) => {
        if (n === 0) return true;
        const { low, high } = anytimeInterval(s, n);
        const pHat = s / n;
        const ends = [...(s > 0 ? [low] : []), ...(s < n ? [high] : [])];
        return ends.every((end) => {
          // ln M is known to its rounding (growing with n) plus slope times the spacing of doubles.
          const size = Math.abs(s * Math.log(end)) + Math.abs((n - s) * Math.log1p(-end));
          const slope = s / end + (n - s) / (1 - end);
          const slack = 1e-13 * Math.max(1, size) + slope * 4.5e-16;
          const onOrOutside = anytimeLogMartingale(end, s, n) >= threshold - slack;
          // A step of a millionth of the way back toward p̂ is clearly inside (ln M is convex).
          const inner = end + 1e-6 * (pHat - end);
          return onOrOutside && anytimeLogMartingale(inner, s, n) < threshold;
        });
      }),
      { seed: 42, numRuns: 500 },
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

  // Ville's inequality promises that a sequence ever leaves the interval with probability at most
  // alpha. Up to n = 500 about 96-98% of sequences stay inside, so we pool 2,000 sequences over four
  // true rates (standard error ~0.004) and ask that at least 95% never leave.
  it("covers the true rate uniformly over time in >= 95% of simulated sequences", () => {
    const sequencesPerRate = 500;
    const horizon = 500;
    let total = 0;
    let covered = 0;
    fc.assert(
      fc.property(
        fc.double({ min: 0.02, max: 0.98, noNaN: true }),
        fc.integer({ min: 0, max: 1e9 }),
        (p, seed) => {
          const rng = Rng.fromLabel(`test:anytime-coverage:${p}:${seed}`);
          for (let q = 0; q < sequencesPerRate; q++) {
            let s = 0;
            let stayed = true;
            for (let n = 1; n <= horizon && stayed; n++) {
              if (rng.bernoulli(p)) s++;
              const { low, high } = anytimeInterval(s, n);
              stayed = low <= p && p <= high;
            }
            total++;
            if (stayed) covered++;
          }
        },
      ),
      { seed: 42, numRuns: 4 },
    );
    expect(total).toBe(4 * sequencesPerRate);
    expect(covered / total).toBeGreaterThanOrEqual(0.95);
  });

  it("handles the edges", () => {
    expect(anytimeInterval(0, 0)).toEqual({ low: 0, high: 1 });
    expect(anytimeInterval(0, 10).low).toBe(0);
    expect(anytimeInterval(10, 10).high).toBe(1);
    // s = 0 has a closed form: ln M = −ln(n + 1) − n ln(1 − p) = ln 20 at the upper end.
    const n = 1e7;
    const closed = -Math.expm1(-(Math.log(20) + Math.log(n + 1)) / n);
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
