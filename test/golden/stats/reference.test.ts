/**
 * Agreement of src/stats with reference values from scipy/statsmodels (arbitrated by mpmath at 50
 * digits where the library itself is off; see generate.py and UPDATE.md). Reads only the JSON.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  anytimeInterval,
  benjaminiHochberg,
  fisherExactGreater,
  holm,
  logBeta,
  logBinomial,
  logGamma,
  mcnemarExact,
  mcnemarExactGreater,
  normalQuantile,
  wilsonInterval,
} from "../../../src/stats/index.js";

interface Case {
  args: unknown[];
  expected: number | number[];
}

interface Reference {
  tolerance: number;
  caseCount: number;
  groups: Record<string, Case[]>;
}

const reference = JSON.parse(
  readFileSync(new URL("./reference.json", import.meta.url), "utf8"),
) as Reference;

const num = (v: unknown): number => v as number;

/** Each group's way of turning a case's args into the numbers to compare. */
const evaluators: Record<string, (args: unknown[]) => number | number[]> = {
  logGamma: ([x]) => logGamma(num(x)),
  logBeta: ([a, b]) => logBeta(num(a), num(b)),
  logBinomial: ([n, k]) => logBinomial(num(n), num(k)),
  normalQuantile: ([p]) => normalQuantile(num(p)),
  wilsonInterval: ([s, n, confidence]) => {
    const ci = wilsonInterval(num(s), num(n), { confidence: num(confidence) });
    return [ci.low, ci.high];
  },
  anytimeInterval: ([s, n, alpha]) => {
    const ci = anytimeInterval(num(s), num(n), { alpha: num(alpha) });
    return [ci.low, ci.high];
  },
  fisherExactGreater: ([as, an, bs, bn]) => fisherExactGreater(num(as), num(an), num(bs), num(bn)),
  mcnemarExact: ([b, c]) => mcnemarExact(num(b), num(c)),
  mcnemarExactGreater: ([b, c]) => mcnemarExactGreater(num(b), num(c)),
  // The report's primary rule: one-sided exact McNemar per arm, then Holm or BH across arms.
  primaryRule: ([arms, option]) => {
    const ps = (arms as [number, number][]).map(([b, c]) => mcnemarExactGreater(b, c));
    return option === "bh" ? benjaminiHochberg(ps) : holm(ps);
  },
  benjaminiHochberg: ([ps]) => benjaminiHochberg(ps as number[]),
  holm: ([ps]) => holm(ps as number[]),
};

/** The looser of absolute and relative error. */
function looserError(actual: number, expected: number): number {
  const diff = Math.abs(actual - expected);
  if (diff === 0) return 0;
  return expected === 0 ? diff : Math.min(diff, diff / Math.abs(expected));
}

describe(`stats reference values (${reference.caseCount} cases)`, () => {
  const groups = Object.entries(reference.groups);
  const total = groups.reduce((sum, [, cases]) => sum + cases.length, 0);

  it("has every group evaluated and at least 300 cases", () => {
    expect(total).toBe(reference.caseCount);
    expect(total).toBeGreaterThanOrEqual(300);
    expect(Object.keys(evaluators).sort()).toEqual(groups.map(([name]) => name).sort());
  });

  const worst: Record<string, number> = {};
  for (const [name, cases] of groups) {
    it(`${name}: ${cases.length} cases agree to ${reference.tolerance}`, () => {
      const evaluate = evaluators[name];
      if (evaluate === undefined) throw new Error(`no evaluator for ${name}`);
      let groupWorst = 0;
      for (const c of cases) {
        const actual = evaluate(c.args);
        const actualList = Array.isArray(actual) ? actual : [actual];
        const expectedList = Array.isArray(c.expected) ? c.expected : [c.expected];
        expect(actualList.length, JSON.stringify(c.args)).toBe(expectedList.length);
        actualList.forEach((a, i) => {
          const e = expectedList[i] as number;
          const error = looserError(a, e);
          groupWorst = Math.max(groupWorst, error);
          expect(
            error,
            `${name}(${JSON.stringify(c.args)})[${i}]: got ${a}, want ${e}`,
          ).toBeLessThanOrEqual(reference.tolerance);
        });
      }
      worst[name] = groupWorst;
    });
  }

  it("reports the case count and the largest error", () => {
    const summary = Object.entries(worst)
      .map(([name, error]) => `${name} ${error.toExponential(2)}`)
      .join(", ");
    console.info(`stats reference: ${total} cases; max looser(abs, rel) error: ${summary}`);
    expect(Object.keys(worst).length).toBe(groups.length);
  });
});
