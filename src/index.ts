/**
 * Provael's public API: define plugins (attacks, defenses, policies, suites), run a plan, build a report,
 * and the statistics behind every number. Everything here is what `import "provael"` gives; the
 * command line is a thin layer over the same functions.
 *
 * @example
 * ```ts
 * import { runAttack } from "provael";
 * // Every plan field left out takes its default (see `libraryPlanDefaults`); named treatments
 * // get their matched controls unless `controls: false`.
 * const result = await runAttack({
 *   plan: { policy: "stub", suite: "stub", tasks: ["fetch_cup"], arms: ["none", "roleplay"], seeds: 5 },
 *   out: "runs/example",
 * });
 * console.log(result.report?.summary.treatment_unsafe);
 * ```
 */

/** The zod that Provael's schemas are built with: a plugin's `params` schema should use it. */
export { z } from "zod";
export { attacks, families, resolveAttacks } from "./attacks/index.js";
export {
  attackProblems,
  defenseProblems,
  policyProblems,
  suiteProblems,
} from "./config/plugin-contract.js";
export {
  loadPlugins,
  type PluginRecord,
  type PluginSource,
  pluginSource,
} from "./config/plugins.js";
export type { EpisodeRecord } from "./core/episode.js";
export { type ErrorCode, isProvaelError, ProvaelError } from "./core/errors.js";
export { PROTOCOL, REPORT_SCHEMA } from "./core/protocol.js";
export {
  defineAttack,
  defineDefense,
  definePolicy,
  defineSuite,
  type PluginKind,
  pluginKind,
} from "./core/registry.js";
export { Rng } from "./core/rng.js";
export type * from "./core/types.js";
export { defenses, resolveDefenses } from "./defenses/index.js";
export { policies } from "./policies/index.js";
export { reportArms } from "./report/arms.js";
export {
  buildReport,
  type Report,
  type ReportArm,
  type ReportArms,
  type ReportInput,
} from "./report/build.js";
/** A run's caveats, worded for the library with `caveats(report, { via: "library" })`. */
export { type Caveat, caveats } from "./report/caveats.js";
export { reportSchema } from "./report/schema.js";
export {
  type BrokenRun,
  type FinishedRun,
  type RunningRun,
  type RunProblem,
  type RunRead,
  readRun,
  readSteps,
} from "./rundir/read.js";
export * as runFiles from "./rundir/schema/index.js";
export {
  completePlan,
  type LibraryRunOptions,
  libraryPlanDefaults,
  type PartialPlan,
  runAttack,
} from "./runner/library.js";
export { type Cell, cellId, type PlanSpec, planCells, planDigest } from "./runner/plan.js";
export type { RunOptions, RunResult } from "./runner/run.js";
export * as stats from "./stats/index.js";
export { suites } from "./suites/index.js";
