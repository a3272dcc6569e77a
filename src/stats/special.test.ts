import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { logBeta, logBinomial, logBinomialPmf, logGamma, stirlingRemainder } from "./special.js";

/** Exact binomial coefficient, as the oracle for the log-space versions. */
function choose(n: number, k: number): bigint {
  let out = 1n;
  for (let i = 1; i <= k; i++) out = (out * BigInt(n - k + i)) / BigInt(i);
  return out;
}

function closeTo(actual: number, expected: number, tolerance: number): boolean {
  const diff = Math.abs(actual - expected);
  return diff <= tolerance * Math.max(1, Math.abs(expected));
}

describe("logGamma", () => {
  it("gives log-factorials at the integers and ½ ln π at ½", () => {
    let factorial = 1;
    for (let n = 1; n <= 170; n++) {
      // (n − 1)! is exact in a double up to 22! and within an ulp or two beyond.
      expect(closeTo(logGamma(n), Math.log(factorial), 4e-16)).toBe(true);
      factorial *= n;
    }
    expect(logGamma(0.5)).toBeCloseTo(0.5 * Math.log(Math.PI), 15);
    expect(logGamma(1)).toBe(0);
    expect(logGamma(2)).toBe(0);
  });

  it("satisfies ln Γ(x + 1) − ln Γ(x) = ln x", () => {
    fc.assert(
      fc.property(fc.double({ min: 1e-6, max: 1e8, noNaN: true }), (x) => {
        const diff = logGamma(x + 1) - logGamma(x);
        // Two values of size ~x ln x are subtracted, so allow for their rounding.
        const scale = Math.max(1, Math.abs(logGamma(x + 1)));
        return Math.abs(diff - Math.log(x)) <= 4e-15 * scale;
      }),
      { seed: 42, numRuns: 500 },
    );
  });

  it("stays finite for huge arguments and rejects non-positive ones", () => {
    expect(Number.isFinite(logGamma(1e300))).toBe(true);
    expect(logGamma(Number.POSITIVE_INFINITY)).toBe(Number.POSITIVE_INFINITY);
    expect(() => logGamma(0)).toThrow(RangeError);
    expect(() => logGamma(-1.5)).toThrow(RangeError);
    expect(() => logGamma(Number.NaN)).toThrow(RangeError);
  });

  it("makes the Stirling remainder continuous across its switch at 15", () => {
    expect(stirlingRemainder(15 - 1e-12)).toBeCloseTo(stirlingRemainder(15), 14);
    expect(() => stirlingRemainder(0)).toThrow(RangeError);
  });
});

describe("logBeta and logBinomial", () => {
  it("is symmetric and agrees with the log-gamma sum for moderate arguments", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1e-3, max: 1e4, noNaN: true }),
        fc.double({ min: 1e-3, max: 1e4, noNaN: true }),
        (a, b) => {
          const direct = logGamma(a) + logGamma(b) - logGamma(a + b);
          const scale = Math.max(1, Math.abs(logGamma(a + b)));
          return (
            logBeta(a, b) === logBeta(b, a) && Math.abs(logBeta(a, b) - direct) <= 1e-13 * scale
          );
        },
      ),
      { seed: 42, numRuns: 500 },
    );
  });

  it("matches exact binomial coefficients", () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 0, max: 300 })
          .chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n }))),
        ([n, k]) => closeTo(logBinomial(n, k), Math.log(Number(choose(n, k))), 1e-14),
      ),
      { seed: 42, numRuns: 300 },
    );
  });

  it("satisfies Pascal's rule in log space at n = 10^7", () => {
    const n = 1e7;
    for (const k of [1, 5, 1234, 3_333_333, 5_000_000]) {
      const left = logBinomial(n, k);
      const right =
        logBinomial(n - 1, k) +
        Math.log1p(Math.exp(logBinomial(n - 1, k - 1) - logBinomial(n - 1, k)));
      expect(Math.abs(left - right)).toBeLessThan(1e-15 * left + 1e-12);
    }
  });

  it("rejects bad arguments", () => {
    expect(() => logBeta(0, 1)).toThrow(RangeError);
    expect(() => logBinomial(3, 4)).toThrow(RangeError);
    expect(() => logBinomial(3.5, 1)).toThrow(RangeError);
    expect(() => logBinomial(-1, 0)).toThrow(RangeError);
  });
});

describe("logBinomialPmf", () => {
  it("sums to one over the support", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (n, p) => {
          let total = 0;
          for (let k = 0; k <= n; k++) total += Math.exp(logBinomialPmf(k, n, p));
          return Math.abs(total - 1) < 1e-12;
        },
      ),
      { seed: 42, numRuns: 100 },
    );
  });

  it("is −∞ off the support and exact at the edges", () => {
    expect(logBinomialPmf(-1, 5, 0.3)).toBe(Number.NEGATIVE_INFINITY);
    expect(logBinomialPmf(6, 5, 0.3)).toBe(Number.NEGATIVE_INFINITY);
    expect(logBinomialPmf(0, 5, 0)).toBe(0);
    expect(logBinomialPmf(5, 5, 1)).toBe(0);
    expect(Math.exp(logBinomialPmf(3, 10, 0.5))).toBeCloseTo(120 / 1024, 15);
    expect(() => logBinomialPmf(1, 5, 1.5)).toThrow(RangeError);
  });
});
