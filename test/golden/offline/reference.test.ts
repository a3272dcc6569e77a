import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { fitEnvelope, summary } from "../../../src/offline/study/measure.js";
import { wilsonInterval } from "../../../src/stats/index.js";

const ref = JSON.parse(readFileSync(new URL("./reference.json", import.meta.url), "utf8"));

describe("offline study numbers against numpy / statsmodels (test/golden/offline/generate.py)", () => {
  it("envelope ranks and bounds", () => {
    for (const c of ref.envelope) {
      const rows = (c.rows as number[][]).map((r) => Float64Array.from(r));
      const dims = (c.rows[0] as number[]).map((_, i) => i);
      if (c.rank === null) {
        expect(() => fitEnvelope(rows, dims, c.target)).toThrow(/needs at least/);
        continue;
      }
      const env = fitEnvelope(rows, dims, c.target);
      expect(env.rank).toBe(c.rank);
      expect(env.tail_level).toBeCloseTo(c.tail_level, 15);
      expect(env.low).toEqual(c.low);
      expect(env.high).toEqual(c.high);
    }
  });

  it("median and p95 of divergences (type 7)", () => {
    for (const c of ref.quantiles) {
      const s = summary(c.values);
      expect(s.median).toBeCloseTo(c.median, 12);
      expect(s.p95).toBeCloseTo(c.p95, 12);
    }
  });

  it("Wilson intervals of exit counts", () => {
    for (const c of ref.exits) {
      const w = wilsonInterval(c.successes, c.n, { confidence: 0.95 });
      expect(w.low).toBeCloseTo(c.low, 12);
      expect(w.high).toBeCloseTo(c.high, 12);
    }
  });
});
