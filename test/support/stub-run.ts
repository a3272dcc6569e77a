/** A plan and a run on the stub pair, for tests that need a real report quickly. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { resolveAttacks } from "../../src/attacks/index.js";
import type { Action, Observation } from "../../src/core/types.js";
import { stubPolicy } from "../../src/policies/stub.js";
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
    scene_pin: 0,
    policy_options: {},
    attack_params: {},
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

/**
 * Replaces the stub policy's `act` with `act(obs, real)` (a server that goes away, a bad action)
 * for every instance loaded until the returned function puts the real one back.
 */
export function wrapStubAct(
  act: (
    obs: Observation,
    real: (obs: Observation) => Promise<Action> | Action,
  ) => Promise<Action> | Action,
): () => void {
  const original = stubPolicy.load;
  stubPolicy.load = async (o) => {
    const inst = await original(o);
    const real = inst.act.bind(inst);
    return {
      ...inst,
      capabilities: inst.capabilities,
      reset: inst.reset.bind(inst),
      close: inst.close.bind(inst),
      act: (obs) => act(obs, real),
    };
  };
  return () => {
    stubPolicy.load = original;
  };
}
