/**
 * `runAttack` as the library offers it (`import { runAttack } from "provael"`): the same run the
 * command line plays, from a plan that may leave out anything with a default. The plan and the
 * options are checked at the boundary, so a misspelt or mistyped field is a `ProvaelError`
 * naming it, never a `TypeError` from deep inside the runner; named treatments get their
 * matched controls, as `provael attack` adds them, unless `controls: false`.
 */
import { z } from "zod";
import { resolveAttacks, withMatchedControls } from "../attacks/index.js";
import { DEFAULTS } from "../config/defaults.js";
import { loadPlugins } from "../config/plugins.js";
import { ProvaelError } from "../core/errors.js";
import { describeIssues } from "../core/zod-issues.js";
import { planSchema } from "../rundir/schema/journal.js";
import { suites } from "../suites/index.js";
import { type LoadedCalibration, loadCalibrations } from "./calibration.js";
import type { PlanSpec } from "./plan.js";
import { type RunOptions, type RunResult, runAttack as runPlan } from "./run.js";

/** A plan with every field that has a default optional (see `libraryPlanDefaults`). */
export type PartialPlan = Partial<PlanSpec>;

/** What the library's `runAttack` takes: `RunOptions` with defaults for all but `out`. */
export interface LibraryRunOptions
  extends Partial<Omit<RunOptions, "plan" | "out" | "policyOptions" | "madeBy">> {
  plan?: PartialPlan;
  out: string;
  /** What reaches the policy (secrets included); default: `plan.policy_options`. */
  policyOptions?: RunOptions["policyOptions"];
  /**
   * A `provael calibrate --out` directory, as `provael attack --calib` takes it: its zones score
   * the tasks they were fitted for (their digests go into the plan's `calibration`).
   */
  calib?: string;
  /**
   * Add the matched control of each named treatment (a benign reword beside an instruction
   * attack, …), as `provael attack` does. Default true; false plays exactly `plan.arms`.
   */
  controls?: boolean;
}

/**
 * The defaults a partial plan is filled with (the command line's own, without a recipe): the
 * learned policy on the tabletop suite, every task, arms `none`, `control` and `instruction`
 * (families are expanded to their attacks), seeds 0..9, one repeat, each task's horizon.
 */
export const libraryPlanDefaults = {
  policy: DEFAULTS.policy,
  suite: DEFAULTS.suite,
  arms: [...DEFAULTS.attacks],
  seed: DEFAULTS.seed,
  seeds: DEFAULTS.seeds,
  repeats: DEFAULTS.repeats,
  horizon: null,
  termination: DEFAULTS.termination,
  scene_pin: DEFAULTS.scenePin,
  policy_options: {},
  attack_params: {},
  calibration: {},
} as const;

const optionsSchema = z
  .object({
    plan: planSchema.partial().optional(),
    out: z.string().min(1),
    resume: z.boolean().optional(),
    concurrency: z.number().int().min(1).optional(),
    workers: z.number().int().min(1).optional(),
    policyOptions: z.record(z.string(), z.unknown()).optional(),
    commandLine: z.array(z.string()).optional(),
    controls: z.boolean().optional(),
    maxEpisodes: z.number().int().min(1).optional(),
    maxErrors: z.number().int().min(0).optional(),
    retryErrors: z.boolean().optional(),
    requireCalibrated: z.boolean().optional(),
    reuse: z.array(z.string()).optional(),
    calib: z.string().min(1).optional(),
  })
  // Functions, signals and loaded objects are passed through as given (typed by the caller).
  .catchall(z.unknown());

const KNOWN_OPTIONS = new Set([
  ...Object.keys(optionsSchema.shape),
  "clock",
  "onProgress",
  "signal",
  "calibrations",
  "shard",
  "plugins",
  "finish",
]);

/** The plan with its defaults filled and its arms expanded, before the runner's own checks. */
export function completePlan(given: PartialPlan, controls = true): PlanSpec {
  // A field given as undefined takes its default, as an absent one does.
  const set = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined));
  const base = { ...libraryPlanDefaults, ...set };
  const suite = suites.get(base.suite);
  const named = resolveAttacks([...base.arms]);
  return {
    ...base,
    tasks: given.tasks ?? suite.tasks().map((t) => t.id),
    arms: controls ? withMatchedControls(named) : named,
    policy_options: { ...base.policy_options },
    attack_params: { ...base.attack_params },
    calibration: { ...base.calibration },
  } as PlanSpec;
}

/**
 * Plays (or resumes) a plan into `options.out` and returns its report, like `provael attack`.
 * Anything the plan leaves out takes `libraryPlanDefaults`; a bad field is refused with a
 * `ProvaelError` (`config/invalid`) naming it, before anything is played.
 *
 * @example
 * ```ts
 * const r = await runAttack({ plan: { policy: "stub", suite: "stub", arms: ["none", "roleplay"],
 *   seeds: 5 }, out: "runs/example" });
 * console.log(r.report?.summary.treatment_unsafe);
 * ```
 */
export async function runAttack(options: LibraryRunOptions): Promise<RunResult> {
  if (options === null || typeof options !== "object") {
    throw new ProvaelError("config/invalid", "runAttack takes an options object", {
      hint: 'e.g. runAttack({ plan: { policy: "stub", suite: "stub" }, out: "runs/x" })',
    });
  }
  const unknown = Object.keys(options).filter((k) => !KNOWN_OPTIONS.has(k));
  if (unknown.length > 0) {
    throw new ProvaelError("config/invalid", `runAttack: unknown option(s) ${unknown.join(", ")}`, {
      details: { unknown, known: [...KNOWN_OPTIONS].sort() },
      hint: `the options are ${[...KNOWN_OPTIONS].sort().join(", ")}`,
    });
  }
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new ProvaelError(
      "config/invalid",
      `runAttack: ${describeIssues(parsed.error, "(options)")}`,
      {
        details: { issues: parsed.error.issues },
        hint: "see the RunOptions and PlanSpec types (every plan field but the ones you set has a default)",
      },
    );
  }
  // Plugins first: the plan may name the suite, policy or attacks they register.
  await loadPlugins(options.plugins ?? []);
  const { controls, plan: given, calib, ...rest } = options;
  const plan = completePlan((given ?? {}) as PartialPlan, controls ?? true);
  const loaded = calib === undefined ? {} : loadCalibrations(calib);
  const fitted = plan.tasks.filter((t) => loaded[t] !== undefined);
  if (calib !== undefined && fitted.length === 0) {
    throw new ProvaelError(
      "config/invalid",
      `runAttack: calib ${calib} fits none of the plan's tasks`,
      {
        details: { calibrated: Object.keys(loaded), tasks: plan.tasks },
        hint: `it holds calibrations of ${Object.keys(loaded).join(", ")}`,
      },
    );
  }
  if (fitted.length > 0) {
    plan.calibration = {
      ...plan.calibration,
      ...Object.fromEntries(fitted.map((t) => [t, (loaded[t] as LoadedCalibration).digest])),
    };
  }
  return runPlan({
    ...rest,
    ...(fitted.length > 0
      ? {
          calibrations: {
            ...(rest.calibrations ?? {}),
            ...Object.fromEntries(fitted.map((t) => [t, loaded[t] as LoadedCalibration])),
          },
        }
      : {}),
    madeBy: "library",
    plan,
    resume: options.resume ?? false,
    concurrency: options.concurrency ?? 1,
    policyOptions: options.policyOptions ?? plan.policy_options,
    commandLine: options.commandLine ?? [],
  });
}
