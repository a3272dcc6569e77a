/**
 * How long a plan will take, before it plays: the documented cost of one step of each built-in
 * policy and suite, times the steps the plan plays, over the workers. The figures are wall-clock
 * seconds per step on one worker, measured on the project's 2-core reference machine under load
 * (docs/scale.md: tabletop × tiny-vla at 0.41 episodes/s on one worker for 300-step episodes,
 * about 8 ms a step; docs/suites.md: 200-step expert episodes at 1.7/s, about 3 ms a step).
 * A policy or suite without a figure (served, onnx, plugins) has no estimate, and says so,
 * rather than a guess: its time depends on a server or a model we have not measured.
 */
import { attacks } from "../attacks/index.js";
import { suites } from "../suites/index.js";

/** Seconds per step the suite costs (physics, and the cameras a policy reads). */
export const SUITE_STEP_SECONDS: Readonly<Record<string, number>> = {
  stub: 0.00002,
  reach: 0.003,
  tabletop: 0.003,
};

/** Seconds per step the policy costs (inference; cameras it renders are in the suite's figure). */
export const POLICY_STEP_SECONDS: Readonly<Record<string, number>> = {
  stub: 0,
  scripted: 0.0005,
  "tiny-vla": 0.005,
  "tiny-vla-backdoored": 0.005,
};

/** Worker scaling on 2 cores (docs/scale.md: 1.83x with 2 workers). */
const WORKER_EFFICIENCY = 0.9;

export interface Estimate {
  /** Wall-clock seconds, or null when the policy or suite has no documented cost. */
  seconds: number | null;
  /** How it was reached, in words (or why there is none). */
  basis: string;
}

export interface EstimateInput {
  policy: string;
  suite: string;
  tasks: string[];
  /** Episodes per task (arms × seeds × repeats, or seeds for a calibration). */
  episodesPerTask: number;
  horizon: number | null;
  workers: number;
  /** Arms: search and gradient arms spend queries on top of their steps, not counted. */
  arms?: string[];
}

/** The estimated wall-clock time of a plan's episodes. */
export function estimatePlan(input: EstimateInput): Estimate {
  const suiteCost = SUITE_STEP_SECONDS[input.suite];
  const policyCost = POLICY_STEP_SECONDS[input.policy];
  if (suiteCost === undefined || policyCost === undefined) {
    const which = suiteCost === undefined ? `suite '${input.suite}'` : `policy '${input.policy}'`;
    return {
      seconds: null,
      basis: `no documented cost for ${which} (its time depends on a server or a model not measured here): time a small plan first`,
    };
  }
  const specs = suites.has(input.suite) ? suites.get(input.suite).tasks() : [];
  let steps = 0;
  for (const t of input.tasks) {
    const horizon = input.horizon ?? specs.find((s) => s.id === t)?.horizon ?? 0;
    steps += horizon * input.episodesPerTask;
  }
  const perStep = suiteCost + policyCost;
  const workers = Math.max(1, input.workers);
  const seconds = (steps * perStep) / (workers === 1 ? 1 : workers * WORKER_EFFICIENCY);
  const searching = (input.arms ?? []).filter((a) => {
    const access = attacks.has(a) ? attacks.get(a).access : "none";
    return access === "black-box-query" || access === "white-box-gradient";
  });
  return {
    seconds,
    basis: `${steps.toLocaleString("en-US")} steps at ${(perStep * 1000).toFixed(perStep < 0.001 ? 2 : 1)} ms a step (documented cost of ${input.policy} on ${input.suite}, a quiet 2-core machine; longer under load), ${workers} worker(s)${searching.length > 0 ? `; not counted: the queries of ${searching.join(", ")}` : ""}`,
  };
}

/** "about 3 min", "about 40 s", "about 2.5 h", or "unknown". */
export function durationText(seconds: number | null): string {
  if (seconds === null) return "unknown";
  if (seconds < 1) return "under a second";
  if (seconds < 120) return `about ${Math.round(seconds)} s`;
  if (seconds < 7200) return `about ${Math.round(seconds / 60)} min`;
  return `about ${(seconds / 3600).toFixed(1)} h`;
}

/** A plan's estimated seconds on one worker (null where its cost is not documented). */
export function planSeconds(plan: {
  policy: string;
  suite: string;
  tasks: string[];
  arms: string[];
  seeds: number;
  repeats: number;
  horizon: number | null;
}): number | null {
  return estimatePlan({
    policy: plan.policy,
    suite: plan.suite,
    tasks: plan.tasks,
    episodesPerTask: plan.arms.length * plan.seeds * Math.max(1, plan.repeats),
    horizon: plan.horizon,
    workers: 1,
    arms: plan.arms,
  }).seconds;
}
