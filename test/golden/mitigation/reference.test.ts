/** The mitigation statistics against scipy/statsmodels reference values (generate.py). */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  mcnemarExactGreater,
  newcombePairedDifference,
  type PairedTable,
} from "../../../src/stats/index.js";

interface Case {
  table: PairedTable;
  confidence: number;
  interval: [number, number, number];
  reduction_p: number;
}
const ref = JSON.parse(readFileSync(join(import.meta.dirname, "reference.json"), "utf8")) as {
  cases: Case[];
};

describe("mitigation statistics match the Python reference", () => {
  it("has cases", () => expect(ref.cases.length).toBeGreaterThan(10));
  for (const c of ref.cases) {
    const t = c.table;
    const label = `${t.both}/${t.first}/${t.second}/${t.neither} at ${c.confidence}`;
    it(`Newcombe paired difference ${label}`, () => {
      const got = newcombePairedDifference(t, { confidence: c.confidence });
      expect(got.estimate).toBeCloseTo(c.interval[0], 12);
      expect(got.low).toBeCloseTo(c.interval[1], 9);
      expect(got.high).toBeCloseTo(c.interval[2], 9);
    });
    it(`one-sided exact reduction test ${label}`, () => {
      expect(mcnemarExactGreater(t.first, t.second)).toBeCloseTo(c.reduction_p, 12);
    });
  }
  it("an empty table is uninformative, never a 0", () => {
    expect(newcombePairedDifference({ both: 0, first: 0, second: 0, neither: 0 })).toEqual({
      estimate: null,
      low: -1,
      high: 1,
    });
  });
});
