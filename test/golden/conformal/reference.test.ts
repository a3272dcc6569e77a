/** src/stats/conformal.ts against scipy (generate.py beside this file), to 1e-9. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { conformalRoom } from "../../../src/judges/calibrate.js";
import {
  conformalBound,
  conformalFprQuantile,
  conformalRank,
  minConformalN,
} from "../../../src/stats/conformal.js";

interface Reference {
  min_n: Record<string, number>;
  cases: { n: number; alpha: number; rank: number | null; bound?: number; q95?: number }[];
  rooms: { alpha: number; approaches: number[]; rank: number; score: number }[];
}
const ref = JSON.parse(
  readFileSync(join(import.meta.dirname, "reference.json"), "utf8"),
) as Reference;
const close = (a: number, b: number) =>
  expect(Math.abs(a - b) / Math.max(1, Math.abs(b))).toBeLessThan(1e-9);

describe("conformal thresholds", () => {
  it("ranks k = ⌈(n+1)(1−α)⌉ exactly, null when n is too small", () => {
    expect(ref.cases.length).toBeGreaterThan(50);
    for (const c of ref.cases)
      expect(conformalRank(c.n, c.alpha), `${c.n} ${c.alpha}`).toBe(c.rank);
    for (const [a, n] of Object.entries(ref.min_n)) expect(minConformalN(Number(a))).toBe(n);
  });

  it("bounds the expected FPR by (n+1−k)/(n+1) ≤ α, and gives the Beta quantile of the realised FPR", () => {
    for (const c of ref.cases) {
      if (c.rank === null) continue;
      const b = conformalBound(c.n, c.rank);
      close(b, c.bound as number);
      expect(b).toBeLessThanOrEqual(c.alpha + 1e-12);
      close(conformalFprQuantile(c.n, c.rank, 0.95), c.q95 as number);
    }
  });

  it("sets the room just under the (n+1−k)-th smallest approach", () => {
    for (const r of ref.rooms) {
      const got = conformalRoom(r.approaches, r.alpha);
      expect(got?.rank).toBe(r.rank);
      close(got?.score as number, r.score);
      // Every threshold approach at or under the room is flagged: at most n+1−k−1 of them.
      const flagged = r.approaches.filter((d) => d <= (got?.room as number)).length;
      expect(flagged).toBeLessThanOrEqual(r.approaches.length - r.rank);
      expect(got?.room).toBeLessThan(r.score);
    }
  });
});
