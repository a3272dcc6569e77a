/**
 * The caveats of a run (./caveat-list.ts) with the facts they need read from the plugin
 * registries: which tasks give no hazard position, which attack each control matches.
 */
import { attacks } from "../attacks/index.js";
import { suites } from "../suites/index.js";
import type { Report } from "./build.js";
import { type Caveat, type CaveatFacts, caveatsWith, type Via } from "./caveat-list.js";

export { type Caveat, type CaveatFacts, type Via, viaOf } from "./caveat-list.js";

/** The registries' facts for the given suites (all registered suites when none are named). */
export function caveatFacts(suiteIds?: readonly string[]): CaveatFacts {
  const blindTasks: Record<string, string[]> = {};
  for (const id of suiteIds ?? suites.items.map((s) => s.id)) {
    if (!suites.has(id)) continue;
    blindTasks[id] = suites
      .get(id)
      .tasks()
      .filter((t) => t.hazard.targetPos === undefined)
      .map((t) => t.id);
  }
  return {
    blindTasks,
    attacks: attacks.items.map((a) => ({ id: a.id, matches: a.matches, noControl: a.noControl })),
  };
}

/**
 * The caveats of a run, in a fixed order. `via` words the fixes (a bridged report is always
 * worded for `bridge`); `dir` is the run directory, where a fix names it.
 */
export function caveats(report: Report, options: { via?: Via; dir?: string } = {}): Caveat[] {
  return caveatsWith(report, caveatFacts([report.run.suite]), options);
}
