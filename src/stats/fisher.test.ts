import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fisherExactGreater } from "./fisher.js";

function choose(n: number, k: number): bigint {
  if (k < 0 || k > n) return 0n;
  let out = 1n;
  for (let i = 1; i <= k; i++) out = (out * BigInt(n - k + i)) / BigInt(i);
  return out;
}

/** numerator / denominator as the nearest double, keeping 64 significant bits of the quotient. */
function ratio(numerator: bigint, denominator: bigint): number {
  if (numerator === 0n) return 0;
  const shift = Math.max(0, denominator.toString(2).length - numerator.toString(2).length + 64);
  return Number((numerator << BigInt(shift)) / denominator) / 2 ** shift;
}

/** The exact one-sided p-value by summing hypergeometric probabilities as big integers. */
function exactGreater(as: number, an: number, bs: number, bn: number): number {
  const marked = as + bs;
  let numerator = 0n;
  for (let k = as; k <= Math.min(an, marked); k++) {
    numerator += choose(marked, k) * choose(an + bn - marked, an - k);
  }
  return ratio(numerator, choose(an + bn, an));
}

const arm = fc
  .integer({ min: 0, max: 80 })
  .chain((n) => fc.tuple(fc.integer({ min: 0, max: n }), fc.constant(n)));
const bigArm = fc
  .integer({ min: 0, max: 10_000_000 })
  .chain((n) => fc.tuple(fc.integer({ min: 0, max: n }), fc.constant(n)));

describe("fisherExactGreater", () => {
  it("equals the exact big-integer hypergeometric tail on small tables", () => {
    fc.assert(
      fc.property(arm, arm, ([as, an], [bs, bn]) => {
        const got = fisherExactGreater(as, an, bs, bn);
        const want = exactGreater(as, an, bs, bn);
        return Math.abs(got - want) <= 1e-13 * want || Math.abs(got - want) <= 1e-300;
      }),
      { seed: 42, numRuns: 400 },
    );
  });

  it("is a probability, never NaN, up to 10^7 per arm", () => {
    fc.assert(
      fc.property(bigArm, bigArm, ([as, an], [bs, bn]) => {
        const p = fisherExactGreater(as, an, bs, bn);
        return p >= 0 && p <= 1;
      }),
      { seed: 42, numRuns: 200 },
    );
  });

  it("falls as arm a gains successes", () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 100_000 })
          .chain((n) => fc.tuple(fc.integer({ min: 0, max: n - 1 }), fc.constant(n))),
        fc
          .integer({ min: 0, max: 100_000 })
          .chain((n) => fc.tuple(fc.integer({ min: 0, max: n }), fc.constant(n))),
        ([as, an], [bs, bn]) =>
          fisherExactGreater(as + 1, an, bs, bn) <= fisherExactGreater(as, an, bs, bn),
      ),
      { seed: 42, numRuns: 200 },
    );
  });

  it("sums the small side when most mass lies below an observed count at the mode", () => {
    // N = 59, K = 57, 19 draws: P(X < 19) ≈ 0.544 although 19 is the mode.
    const got = fisherExactGreater(19, 19, 38, 40);
    const want = exactGreater(19, 19, 38, 40);
    expect(Math.abs(got - want)).toBeLessThanOrEqual(1e-14 * want);
  });

  it("gives 1 for degenerate margins and known values otherwise", () => {
    expect(fisherExactGreater(0, 0, 3, 7)).toBe(1);
    expect(fisherExactGreater(3, 7, 0, 0)).toBe(1);
    expect(fisherExactGreater(0, 10, 0, 10)).toBe(1);
    expect(fisherExactGreater(10, 10, 10, 10)).toBe(1);
    expect(fisherExactGreater(0, 10, 4, 10)).toBe(1);
    // Only the lone failure's arm is random: p = P(it falls in arm b) = 1/2, exactly.
    expect(fisherExactGreater(1e7, 1e7, 1e7 - 1, 1e7)).toBeCloseTo(0.5, 14);
    expect(fisherExactGreater(8, 10, 2, 10)).toBeCloseTo(0.011507068782610529, 15);
    expect(fisherExactGreater(1e7, 1e7, 0, 1e7)).toBe(0);
  });

  it("rejects bad input with a RangeError", () => {
    expect(() => fisherExactGreater(3, 2, 0, 1)).toThrow(RangeError);
    expect(() => fisherExactGreater(1, 2, 2, 1)).toThrow(RangeError);
    expect(() => fisherExactGreater(-1, 2, 0, 1)).toThrow(RangeError);
    expect(() => fisherExactGreater(1, 2.5, 0, 1)).toThrow(RangeError);
  });
});
