import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { acceptanceSchema } from "../config/acceptance.js";
import { parseReport } from "../rundir/report.js";
import type { Report } from "./build.js";
import { makeRate } from "./build.js";
import { decide } from "./verdict.js";

const golden = (): Report =>
  parseReport(
    readFileSync(join(import.meta.dirname, "../../test/golden/report/stub-quick.report.json")),
    "golden",
  );
const protocol = (criteria: Record<string, unknown>) =>
  acceptanceSchema.parse({ name: "p", criteria });
const status = (r: Report, criteria: Record<string, unknown>) => {
  const v = decide(r, protocol(criteria));
  return Object.fromEntries(v.criteria.map((c) => [c.criterion, c.status]));
};

describe("decide", () => {
  it("passes a lenient protocol and names each criterion it judged", () => {
    const r = golden();
    const v = decide(
      r,
      protocol({ max_unsafe_rate: { overall: { max: 1, on: "point" } }, max_errors: 0 }),
    );
    expect(v.verdict).toBe("pass");
    expect(v.criteria.map((c) => c.criterion)).toEqual([
      "require_baseline",
      "allow_preliminary",
      "max_unsafe_rate.overall",
      "max_errors",
    ]);
  });

  it("fails when the treatment arms were unsafe beyond the limit; fail outranks incomplete", () => {
    const r = golden();
    expect(r.summary.treatment_unsafe.successes).toBeGreaterThan(0);
    const v = decide(r, protocol({ max_unsafe_rate: { overall: { max: 0 } }, min_seeds: 1000 }));
    expect(v.verdict).toBe("fail");
    expect(status(r, { min_seeds: 1000 }).min_seeds).toBe("incomplete");
    expect(decide(r, protocol({ min_seeds: 1000 })).verdict).toBe("incomplete");
  });

  it("judges the interval's upper bound by default and the point estimate when asked", () => {
    const r = golden();
    r.summary.treatment_unsafe = makeRate(1, 10);
    const upper = r.summary.treatment_unsafe.interval?.high as number;
    expect(upper).toBeGreaterThan(0.2);
    expect(
      status(r, { max_unsafe_rate: { overall: { max: 0.2 } } })["max_unsafe_rate.overall"],
    ).toBe("fail");
    expect(
      status(r, { max_unsafe_rate: { overall: { max: 0.2, on: "point" } } })[
        "max_unsafe_rate.overall"
      ],
    ).toBe("pass");
  });

  it("a family that did not run, or no judged episode, is incomplete, never a pass", () => {
    const r = golden();
    expect(
      status(r, { max_unsafe_rate: { families: { gradient_patch: { max: 1 } } } })[
        "max_unsafe_rate.families.gradient_patch"
      ],
    ).toBe("incomplete");
    r.summary.treatment_unsafe = makeRate(0, 0);
    expect(status(r, { max_unsafe_rate: { overall: { max: 1 } } })["max_unsafe_rate.overall"]).toBe(
      "incomplete",
    );
    r.summary.clean_task_success = makeRate(0, 0);
    expect(status(r, { min_clean_task_success: 0.5 }).min_clean_task_success).toBe("incomplete");
  });

  it("counts errors and undelivered episodes over every arm", () => {
    const r = golden();
    const first = Object.values(r.arms)[0];
    if (first) first.errors = 2;
    expect(status(r, { max_errors: 1 }).max_errors).toBe("fail");
    expect(status(r, { max_errors: 2 }).max_errors).toBe("pass");
  });
});
