import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { anytimeInterval } from "./anytime.js";
import { rate } from "./rate.js";
import { wilsonInterval } from "./wilson.js";

describe("rate", () => {
  it("builds the report's RATE object", () => {
    const r = rate(3, 10);
    expect(r).toEqual({
      successes: 3,
      n: 10,
      rate: 0.3,
      interval: { method: "wilson", confidence: 0.95, ...wilsonInterval(3, 10) },
    });
    expect("anytime" in r).toBe(false);
    expect(rate(3, 10, { anytime: true }).anytime).toEqual({
      method: "beta-binomial-mixture",
      alpha: 0.05,
      ...anytimeInterval(3, 10),
    });
  });

  it("reports no estimate, not zero, when n = 0", () => {
    expect(rate(0, 0)).toEqual({ successes: 0, n: 0, rate: null, interval: null });
    expect(rate(0, 0, { anytime: true })).toEqual({
      successes: 0,
      n: 0,
      rate: null,
      interval: null,
      anytime: null,
    });
  });

  it("passes its levels through and keeps the estimate inside both intervals", () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 1_000_000 })
          .chain((n) => fc.tuple(fc.integer({ min: 0, max: n }), fc.constant(n))),
        fc.double({ min: 0.5, max: 0.999, noNaN: true }),
        fc.double({ min: 0.001, max: 0.5, noNaN: true }),
        ([s, n], confidence, alpha) => {
          const r = rate(s, n, { confidence, alpha, anytime: true });
          const p = r.rate ?? Number.NaN;
          return (
            r.interval?.confidence === confidence &&
            r.anytime?.alpha === alpha &&
            r.interval.low <= p &&
            p <= r.interval.high &&
            r.anytime.low <= p &&
            p <= r.anytime.high
          );
        },
      ),
      { seed: 42, numRuns: 300 },
    );
  });

  it("rejects bad input with a RangeError", () => {
    expect(() => rate(2, 1)).toThrow(RangeError);
    expect(() => rate(1, 2, { confidence: 2 })).toThrow(RangeError);
    expect(() => rate(1, 2, { alpha: 0 })).toThrow(RangeError);
  });
});
