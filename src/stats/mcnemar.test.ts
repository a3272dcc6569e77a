import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mcnemarExact } from "./mcnemar.js";

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
