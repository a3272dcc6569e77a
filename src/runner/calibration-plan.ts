/**
 * What `provael calibrate` would play, decided before anything plays: per task, whether a zone
 * can be fitted at all (the suite gives the task's hazard position, and its scenes can fill the
 * fit, threshold and evaluate splits for the target), the seeds that fill them, the episode
 * count and the estimated time. The command refuses infeasible tasks from this, its
 * `--dry-run` prints it, and a finished run's `next:` hint names a calibration only from it.
 */
import { ProvaelError } from "../core/errors.js";
import { unknownName } from "../core/registry.js";
import {
  calibrationRange,
  DEFAULT_TARGET_FPR,
  SPLIT_RULE,
  SPLITS,
  seedsNeeded,
  splitCounts,
  splitNeeds,
} from "../judges/calibrate.js";
import { policies } from "../policies/index.js";
import type { Report } from "../report/build.js";
import { suites } from "../suites/index.js";
import { calibrationsIn } from "./calibration.js";
import { durationText, type Estimate, estimatePlan } from "./estimate.js";
import { defaultWorkers } from "./executor.js";

export { DEFAULT_TARGET_FPR } from "../judges/calibrate.js";

/**
 * Above this many benign episodes, `calibrate` asks before playing: `--yes`, or a "y" on a
 * terminal after the count and the estimate are shown. A 1%-target calibration of the four
 * reach tasks is under it; the twelve tabletop tasks at 1% (3,588 episodes, hours) are over it.
 */
export const CONFIRM_ABOVE_EPISODES = 1000;

export interface CalibrationRefusal {
  task: string;
  code: "calibration/degenerate" | "calibration/too-few-scenes";
  reason: string;
  hint: string;
}

export interface CalibrationPlan {
  policy: string;
  suite: string;
  targetFpr: number;
  /** The tasks a zone can be fitted for, in the suite's order. */
  tasks: string[];
  refused: CalibrationRefusal[];
  /** First seed and seeds per task (the most any feasible task needs, or --seeds). */
  first: number;
  seeds: number;
  episodes: number;
  /** Per split, what the target needs and (per task) what the seeds give. */
  need: Record<(typeof SPLITS)[number], number>;
  estimate: Estimate;
}

export interface CalibrationRequest {
  policy: string;
  suite: string;
  /** Absent: every task of the suite. */
  tasks?: string[];
  seeds?: number;
  seed?: number;
  targetFpr?: number;
  horizon?: number | null;
  workers?: number;
}

/**
 * Plans a calibration; unknown names are refused (did-you-mean), infeasible tasks are listed in
 * `refused` with the reason, never played.
 */
export function planCalibration(req: CalibrationRequest): CalibrationPlan {
  const suite = suites.get(req.suite);
  policies.get(req.policy);
  const target = req.targetFpr ?? DEFAULT_TARGET_FPR;
  const specs = suite.tasks();
  const known = specs.map((t) => t.id);
  const asked = req.tasks ?? known;
  for (const t of asked) {
    if (!known.includes(t)) {
      throw unknownName(
        "task",
        t,
        known,
        "provael list-suites",
        "config/unknown-task",
        ` in suite '${req.suite}'`,
      );
    }
  }
  const first = req.seed ?? calibrationRange(suite.sceneRoles)[0];
  const need = splitNeeds(target);
  const needText = SPLITS.map((s) => `${s} ${need[s]}`).join(", ");
  const refused: CalibrationRefusal[] = [];
  const tasks: string[] = [];
  let seeds = 0;
  for (const t of specs.filter((x) => asked.includes(x.id))) {
    if (!t.hazard.targetPos) {
      refused.push({
        task: t.id,
        code: "calibration/degenerate",
        reason: `suite '${req.suite}' gives no hazard position for task '${t.id}', and a keep-out zone is a box that contains its hazard`,
        hint: "calibrate a suite whose tasks give hazard positions (reach, tabletop), or a bridge run with a profile (`calibrate --from DIR --profile P`)",
      });
      continue;
    }
    const needed = seedsNeeded(target, first, t.scenes);
    if (needed === null) {
      refused.push({
        task: t.id,
        code: "calibration/too-few-scenes",
        reason: `task '${t.id}' has ${t.scenes} scene(s): split by scene (${SPLIT_RULE}) they cannot give ${needText} episodes for a false-positive rate of ${target}`,
        hint: "raise --target-fpr",
      });
      continue;
    }
    if (req.seeds !== undefined && req.seeds < needed) {
      const have = splitCounts(first, req.seeds, t.scenes);
      refused.push({
        task: t.id,
        code: "calibration/too-few-scenes",
        reason: `--seeds ${req.seeds} from seed ${first} gives task '${t.id}' ${SPLITS.map((s) => `${s} ${have[s]}`).join(", ")} episodes; a false-positive rate of ${target} needs ${needText}`,
        hint: `pass --seeds ${needed} (or omit --seeds), or raise --target-fpr`,
      });
      continue;
    }
    tasks.push(t.id);
    seeds = Math.max(seeds, req.seeds ?? needed);
  }
  const episodes = seeds * tasks.length;
  return {
    policy: req.policy,
    suite: req.suite,
    targetFpr: target,
    tasks,
    refused,
    first,
    seeds,
    episodes,
    need,
    estimate: estimatePlan({
      policy: req.policy,
      suite: req.suite,
      tasks,
      episodesPerTask: seeds,
      horizon: req.horizon ?? null,
      workers: req.workers ?? 1,
    }),
  };
}

/** Refuses a plan with any infeasible task, naming every one, before anything plays. */
export function checkCalibrationPlan(plan: CalibrationPlan): void {
  if (plan.refused.length === 0) return;
  const [first] = plan.refused as [CalibrationRefusal];
  // Tasks without a hazard position are named together: the reason is the suite's, once.
  const hazardless = plan.refused.filter((r) => r.code === "calibration/degenerate");
  const reasons = [
    ...(hazardless.length > 1
      ? [
          `suite '${plan.suite}' gives no hazard position for tasks ${hazardless.map((r) => r.task).join(", ")}, and a keep-out zone is a box that contains its hazard`,
        ]
      : hazardless.map((r) => r.reason)),
    ...plan.refused.filter((r) => r.code !== "calibration/degenerate").map((r) => r.reason),
  ];
  const all = reasons.join("; ");
  throw new ProvaelError(
    first.code,
    plan.tasks.length === 0
      ? `calibrate can fit no task: ${all}`
      : `calibrate cannot fit ${plan.refused.length} of ${plan.refused.length + plan.tasks.length} task(s): ${all}`,
    {
      details: { refused: plan.refused, feasible: plan.tasks },
      hint:
        plan.tasks.length === 0
          ? first.hint
          : `${first.hint}; or calibrate the tasks it can fit: --tasks ${plan.tasks.join(",")}`,
    },
  );
}

/** One line: the count, the seeds and the estimated time. */
export function calibrationSummary(plan: CalibrationPlan): string {
  if (plan.tasks.length === 0) return "no task can be fitted: nothing to play";
  return `${plan.tasks.length} task(s) × ${plan.seeds} seeds (${plan.first}..${plan.first + plan.seeds - 1}) = ${plan.episodes.toLocaleString("en-US")} benign episodes, estimated ${durationText(plan.estimate.seconds)}`;
}

/** What a finished run tells the calibrate hint (report.json's run, and what it does not record). */
export interface HintRun {
  policy: string;
  suite: string;
  tasks: string[];
  /** Per task, where its predicate came from (report.json `calibration`). */
  calibration: Record<string, { source: string }>;
  /** Behaviour options recorded by the run (report.json `run.policy_options`). */
  policyOptions?: Record<string, unknown> | undefined;
  plugins?: unknown[] | undefined;
  /** A served policy's model, or a bridged run: calibrate cannot play either from a hint. */
  served?: boolean;
  bridged?: boolean;
  /** The weights file the run loaded (--policy-path; report.json does not record paths). */
  policyPath?: string;
}

/** The shell form of one argument (quoted only when it must be). */
const shellArg = (a: string) =>
  /^[A-Za-z0-9_./:=,@%+-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`;

/**
 * The `provael calibrate` command that fits zones for this run's uncalibrated tasks, with its
 * episode count and estimated time, or null when no such command can work: every task is
 * calibrated already, the suite gives no hazard position (the stub), or the run needs what
 * calibrate cannot be given (a served policy, plugins, policy options, a bridged benchmark).
 * `outExists` says whether a directory already holds calibrations (a hint must not name one).
 */
export function calibrationHint(
  run: HintRun,
  options: { workers: number; outExists: (dir: string) => boolean },
): string | null {
  if (run.served || run.bridged) return null;
  if ((run.plugins?.length ?? 0) > 0) return null;
  if (Object.keys(run.policyOptions ?? {}).length > 0) return null;
  if (!suites.has(run.suite) || !policies.has(run.policy)) return null;
  const uncalibrated = run.tasks.filter(
    (t) => (run.calibration[t]?.source ?? "suite-default") === "suite-default",
  );
  if (uncalibrated.length === 0) return null;
  const plan = planCalibration({
    policy: run.policy,
    suite: run.suite,
    tasks: uncalibrated,
    workers: options.workers,
  });
  if (plan.tasks.length === 0) return null;
  const all = suites
    .get(run.suite)
    .tasks()
    .map((t) => t.id);
  const scoped = plan.tasks.length < all.length;
  let out = `calib/${run.policy}-${run.suite}`;
  for (let i = 2; options.outExists(out); i++) out = `calib/${run.policy}-${run.suite}-${i}`;
  const args = [
    "provael",
    "calibrate",
    "--policy",
    run.policy,
    "--suite",
    run.suite,
    ...(scoped ? ["--tasks", plan.tasks.join(",")] : []),
    ...(run.policyPath ? ["--policy-path", run.policyPath] : []),
    "--out",
    out,
  ];
  const ask = plan.episodes > CONFIRM_ABOVE_EPISODES ? "; it asks first, or add --yes" : "";
  return `${args.map(shellArg).join(" ")} (${plan.episodes.toLocaleString("en-US")} benign episodes, ${durationText(plan.estimate.seconds)}${ask})`;
}

/**
 * The calibrate command for a finished run (its report, and the weights path it was given,
 * which report.json does not record), with this machine's workers; null where none can work.
 */
export function calibrationHintOf(report: Report, policyPath?: string): string | null {
  return calibrationHint(
    {
      ...report.run,
      calibration: report.calibration,
      policyOptions: report.run.policy_options,
      served: report.run.served_model !== undefined,
      bridged: report.run.bridge !== undefined,
      ...(policyPath ? { policyPath } : {}),
    },
    { workers: defaultWorkers(), outExists: calibrationsIn },
  );
}
