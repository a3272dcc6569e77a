/** A plan and a run on the stub pair, for tests that need a real report quickly. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { resolveAttacks } from "../../src/attacks/index.js";
import type { Report } from "../../src/report/build.js";
import type { PlanSpec } from "../../src/runner/plan.js";
import { runAttack } from "../../src/runner/run.js";

export function stubPlan(over: Partial<PlanSpec> = {}): PlanSpec {
  return {
    policy: "stub",
    suite: "stub",
    tasks: ["fetch_cup", "wipe_plate"],
    arms: resolveAttacks(["none", "control", "instruction"]),
    seed: 0,
    seeds: 5,
    repeats: 1,
    horizon: null,
    termination: "fixed-horizon",
    scenePin: 0,
    policyOptions: {},
    attackParams: {},
    calibration: {},
    ...over,
  };
}

/** Runs a stub plan into `out` and returns its report. */
export async function runStub(out: string, over: Partial<PlanSpec> = {}): Promise<Report> {
  await runAttack({
    plan: stubPlan(over),
    out,
    resume: false,
    concurrency: 1,
    policyOptions: {},
    commandLine: ["test"],
    finish: { html: false },
  });
  return JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as Report;
}
