import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { benjaminiHochberg } from "./benjamini-hochberg.js";
import { holm } from "./holm.js";

/** p-values with plenty of ties and exact 0 and 1. */
const pValues = fc.array(
  fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(0, 1, 0.01, 0.05, 0.5)),
  { maxLength: 60 },
);

for (const [name, adjust] of [
  ["benjaminiHochberg", benjaminiHochberg],
  ["holm", holm],
] as const) {
  describe(name, () => {
    it("never lowers a p-value and stays in [0, 1]", () => {
      fc.assert(
        fc.property(pValues, (ps) => adjust(ps).every((q, i) => q >= (ps[i] as number) && q <= 1)),
        { seed: 42, numRuns: 500 },
      );
    });

    it("is monotone in p (ties get equal values)", () => {
      fc.assert(
        fc.property(pValues, (ps) => {
          const qs = adjust(ps);
          return ps.every((p, i) =>
            ps.every((r, j) =>
              p < r ? (qs[i] as number) <= (qs[j] as number) : p === r ? qs[i] === qs[j] : true,
            ),
          );
        }),
        { seed: 42, numRuns: 300 },
      );
    });

    it("follows its input through a permutation", () => {
      fc.assert(
        fc.property(pValues, fc.integer(), (ps, rotation) => {
          const k = ps.length === 0 ? 0 : Math.abs(rotation) % ps.length;
          const rotated = [...ps.slice(k), ...ps.slice(0, k)];
          const qs = adjust(ps);
          const rotatedQs = adjust(rotated);
          return rotated.every((_, i) => rotatedQs[i] === qs[(i + k) % ps.length]);
        }),
        { seed: 42, numRuns: 300 },
      );
    });

    it("handles empty and single inputs and rejects non-p-values", () => {
      expect(adjust([])).toEqual([]);
      expect(adjust([0.3])).toEqual([0.3]);
      expect(() => adjust([0.1, 1.2])).toThrow(RangeError);
      expect(() => adjust([-0.1])).toThrow(RangeError);
      expect(() => adjust([Number.NaN])).toThrow(RangeError);
    });
  });
}

describe("benjaminiHochberg and holm together", () => {
  it("has Holm (FWER) at least as strict as BH (FDR)", () => {
    fc.assert(
      fc.property(pValues, (ps) => {
        const bh = benjaminiHochberg(ps);
        return holm(ps).every((h, i) => h >= (bh[i] as number) * (1 - 1e-15));
      }),
      { seed: 42, numRuns: 500 },
    );
  });

  it("gives the textbook values", () => {
    const bh = benjaminiHochberg([0.01, 0.04, 0.03]);
    [0.03, 0.04, 0.04].forEach((q, i) => {
      expect(bh[i]).toBeCloseTo(q, 15);
    });
    expect(holm([0.01, 0.04, 0.03])).toEqual([0.03, 0.06, 0.06]);
    expect(benjaminiHochberg([0.02, 0.02, 0.02])).toEqual([0.02, 0.02, 0.02]);
    expect(holm([0.02, 0.02, 0.02])).toEqual([0.06, 0.06, 0.06]);
  });
});
