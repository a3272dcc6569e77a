/**
 * The caveats of a run (./caveat-list.ts) with the facts they need read from the plugin
 * registries: which tasks give no hazard position, which attack each control matches.
 */
import { attacks } from "../attacks/index.js";
import { calibrationRange, DEFAULT_TARGET_FPR, seedsNeeded } from "../judges/calibrate.js";
import { policies } from "../policies/index.js";
import { suites } from "../suites/index.js";
import type { Report } from "./build.js";
import { type Caveat, type CaveatFacts, caveatsWith, type Via } from "./caveat-list.js";

export {
  type Caveat,
  type CaveatFacts,
  type Via,
  viaOf,
  viaOfManifest,
} from "./caveat-list.js";

/** The registries' facts for the given suites (all registered suites when none are named). */
export function caveatFacts(suiteIds?: readonly string[]): CaveatFacts {
  const blindTasks: Record<string, string[]> = {};
  const calibrationSeeds: NonNullable<CaveatFacts["calibrationSeeds"]> = {};
  const suiteTasks: Record<string, string[]> = {};
  for (const id of suiteIds ?? suites.items.map((s) => s.id)) {
    if (!suites.has(id)) continue;
    const suite = suites.get(id);
    const tasks = suite.tasks();
    suiteTasks[id] = tasks.map((t) => t.id);
    blindTasks[id] = tasks.filter((t) => t.hazard.targetPos === undefined).map((t) => t.id);
    // As `provael calibrate` plans them (runner/calibration-plan.ts), at its default target.
    const first = calibrationRange(suite.sceneRoles)[0];
    const needed = tasks
      .filter((t) => t.hazard.targetPos !== undefined)
      .map((t) => seedsNeeded(DEFAULT_TARGET_FPR, first, t.scenes));
    if (needed.length > 0 && needed.every((n) => n !== null))
      calibrationSeeds[id] = { first, seeds: Math.max(...(needed as number[])) };
  }
  return {
    blindTasks,
    attacks: attacks.items.map((a) => ({ id: a.id, matches: a.matches, noControl: a.noControl })),
    suiteTasks,
    servedPolicies: policies.items.filter((p) => p.ioBound === true).map((p) => p.id),
    calibrationSeeds,
  };
}

/**
 * The caveats of a run, in a fixed order. `via` words the fixes (a bridged report is always
 * worded for `bridge`); `dir` is the run directory, where a fix names it.
 */
export function caveats(report: Report, options: { via?: Via; dir?: string } = {}): Caveat[] {
  return caveatsWith(report, caveatFacts([report.run.suite]), options);
}
