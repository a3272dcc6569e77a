import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mcnemarExact, mcnemarExactGreater } from "./mcnemar.js";

/** 2 P(X <= min(b, c)) for X ~ Binomial(b + c, 1/2), summed as big integers. */
function exactMcnemar(b: number, c: number): number {
  const n = b + c;
  if (n === 0) return 1;
  let numerator = 0n;
  let coefficient = 1n;
  for (let k = 0; k <= Math.min(b, c); k++) {
    numerator += coefficient;
    coefficient = (coefficient * BigInt(n - k)) / BigInt(k + 1);
  }
  const denominator = 1n << BigInt(n - 1);
  const shift = Math.max(0, denominator.toString(2).length - numerator.toString(2).length + 64);
  return Math.min(1, Number((numerator << BigInt(shift)) / denominator) / 2 ** shift);
}

describe("mcnemarExact", () => {
  it("equals the exact binomial computation", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 400 }), (b, c) => {
        const got = mcnemarExact(b, c);
        const want = exactMcnemar(b, c);
        return Math.abs(got - want) <= 1e-13 * want;
      }),
      { seed: 42, numRuns: 400 },
    );
  });

  it("is symmetric, a probability, and falls as the split grows more lopsided", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: 0, max: 10_000_000 }),
        (b, c) => {
          const p = mcnemarExact(b, c);
          const lopsided = b <= c ? mcnemarExact(b, c + 1) : mcnemarExact(b + 1, c);
          return p === mcnemarExact(c, b) && p >= 0 && p <= 1 && lopsided <= p;
        },
      ),
      { seed: 42, numRuns: 300 },
    );
  });

  it("handles the edges", () => {
    expect(mcnemarExact(0, 0)).toBe(1);
    expect(mcnemarExact(0, 1)).toBe(1);
    expect(mcnemarExact(5, 5)).toBe(1);
    expect(mcnemarExact(1, 9)).toBeCloseTo(22 / 1024, 15);
    expect(mcnemarExact(0, 10_000_000)).toBe(0);
    expect(() => mcnemarExact(-1, 2)).toThrow(RangeError);
    expect(() => mcnemarExact(1, 0.5)).toThrow(RangeError);
  });
});

/** P(X >= b) for X ~ Binomial(b + c, 1/2), summed as big integers. */
function exactGreater(b: number, c: number): number {
  const n = b + c;
  if (n === 0) return 1;
  let numerator = 0n;
  let coefficient = 1n;
  // Σ_{k<=c} C(n, k) = Σ_{k>=b} C(n, k).
  for (let k = 0; k <= c; k++) {
    numerator += coefficient;
    coefficient = (coefficient * BigInt(n - k)) / BigInt(k + 1);
  }
  const denominator = 1n << BigInt(n);
  const shift = Math.max(0, denominator.toString(2).length - numerator.toString(2).length + 64);
  return Math.min(1, Number((numerator << BigInt(shift)) / denominator) / 2 ** shift);
}

describe("mcnemarExactGreater", () => {
  it("equals the exact binomial tail", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 400 }), (b, c) => {
        const got = mcnemarExactGreater(b, c);
        const want = exactGreater(b, c);
        return Math.abs(got - want) <= 1e-13 * want;
      }),
      { seed: 42, numRuns: 400 },
    );
  });

  it("is one-sided: an arm that is safer than its twin is never significant", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        (b, c) => {
          const p = mcnemarExactGreater(b, c);
          // b <= c is no evidence of an increase: p stays at or above one half.
          return p >= 0 && p <= 1 && (b > c || p >= 0.5) && mcnemarExactGreater(b + 1, c) <= p;
        },
      ),
      { seed: 7, numRuns: 300 },
    );
  });

  it("is half the two-sided p-value on the side of an increase", () => {
    for (const [b, c] of [
      [9, 1],
      [30, 12],
      [1000, 900],
    ] as const)
      expect(mcnemarExactGreater(b, c)).toBeCloseTo(mcnemarExact(b, c) / 2, 14);
  });

  it("handles the edges", () => {
    expect(mcnemarExactGreater(0, 0)).toBe(1);
    expect(mcnemarExactGreater(0, 5)).toBe(1);
    expect(mcnemarExactGreater(1, 0)).toBe(0.5);
    expect(mcnemarExactGreater(9, 1)).toBeCloseTo(11 / 1024, 15);
    expect(mcnemarExactGreater(1, 9)).toBeCloseTo(1023 / 1024, 15);
    expect(mcnemarExactGreater(10_000_000, 0)).toBe(0);
    expect(() => mcnemarExactGreater(-1, 2)).toThrow(RangeError);
  });
});
