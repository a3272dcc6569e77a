import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseReport } from "../rundir/report.js";
import type { Report } from "./build.js";
import { makeRate } from "./build.js";
import { compareReports, incomparableReasons } from "./regression.js";

/** The golden stub quick run: a real report, read through the reader. */
const golden = (): Report =>
  parseReport(
    readFileSync(join(import.meta.dirname, "../../test/golden/report/stub-quick.report.json")),
    "golden",
  );

/** A copy in which every treatment arm is `unsafe` of its judged episodes unsafe, pooled too. */
function withTreatmentUnsafe(report: Report, unsafe: (n: number) => number): Report {
  const r = structuredClone(report);
  let s = 0;
  let n = 0;
  for (const arm of Object.values(r.arms)) {
    if (arm.role !== "treatment") continue;
    arm.unsafe = makeRate(unsafe(arm.unsafe.n), arm.unsafe.n);
    s += arm.unsafe.successes;
    n += arm.unsafe.n;
  }
  r.summary.treatment_unsafe = makeRate(s, n);
  return r;
}

describe("compareReports", () => {
  it("a run against itself: comparable, every slice tested, nothing regressed", () => {
    const r = golden();
    const c = compareReports(r, r);
    expect(c.comparable).toBe(true);
    expect(c.regressed).toEqual([]);
    const treatments = Object.values(r.arms).filter((a) => a.role === "treatment").length;
    expect(c.slices.filter((s) => s.kind === "arm")).toHaveLength(treatments);
    for (const s of c.slices) expect(s.difference).toBe(0);
  });

  it("a candidate unsafe far more often regresses overall and per arm, Holm corrected", () => {
    const baseline = withTreatmentUnsafe(golden(), () => 0);
    const candidate = withTreatmentUnsafe(golden(), (n) => n);
    const c = compareReports(candidate, baseline);
    expect(c.regressed).toContain("overall");
    expect(c.regressed.filter((s) => s.startsWith("arm:")).length).toBeGreaterThan(0);
    const overall = c.slices.find((s) => s.slice === "overall");
    expect(overall?.difference).toBe(1);
    expect(overall?.holm_p).toBeLessThan(0.05);
    expect(overall?.holm_p).toBeGreaterThanOrEqual(overall?.fisher_p as number);
    // The reverse direction (a safer candidate) never regresses.
    expect(compareReports(baseline, candidate).regressed).toEqual([]);
  });

  it("a rise within the tolerance is not a regression, however significant", () => {
    const baseline = withTreatmentUnsafe(golden(), () => 0);
    const candidate = withTreatmentUnsafe(golden(), (n) => Math.floor(n / 2));
    const c = compareReports(candidate, baseline, { tolerance: 0.6 });
    expect(c.slices[0]?.holm_p).toBeLessThan(0.05);
    expect(c.regressed).toEqual([]);
    expect(c.slices[0]?.reason).toMatch(/within the tolerance/);
  });

  it("refuses runs of another suite or other attack params, naming the field, unless allowed", () => {
    const a = golden();
    const b = structuredClone(a);
    b.run.horizon = 7;
    expect(incomparableReasons(a, b)).toEqual([expect.stringMatching(/^horizon: /)]);
    expect(() => compareReports(a, b)).toThrow(/not comparable: horizon/);
    const labelled = compareReports(a, b, { allowIncomparable: true });
    expect(labelled.comparable).toBe(false);
    expect(() => compareReports(a, a, { tolerance: 1 })).toThrow(/--tolerance/);
  });
});
