/**
 * Playing one cell with an open suite instance and policy instance: what every executor does per
 * cell, in a Node worker thread or a page's Web Worker alike (browser-safe).
 */
import type { PluginSource } from "../config/plugins.js";
import { systemClock } from "../core/clock.js";
import type { EpisodeRecord, TrajectoryStep } from "../core/episode.js";
import type { Observation, PolicyInstance, PolicyOptions, SuiteInstance } from "../core/types.js";
import type { DefenseTiming } from "../defenses/chain.js";
import { episodeContext, type LoadedCalibration, playEpisode } from "../kernel/index.js";
import { suites } from "../suites/index.js";
import type { Cell, PlanSpec } from "./plan.js";

export interface CellResult {
  record: EpisodeRecord;
  trajectory: TrajectoryStep[];
  /** Defended cells: wall-clock time in the defenses' hooks (manifest only, never the report). */
  timing?: DefenseTiming;
}

export interface ExecutorSetup {
  plan: PlanSpec;
  policyOptions: PolicyOptions;
  calibrations: Record<string, LoadedCalibration>;
  /** Per arm: whether its requirements hold (N/A arms are recorded, not played). */
  applicable: Record<string, boolean>;
  /** Plugin files to load before playing (worker threads register them too). */
  plugins?: PluginSource[];
  /** Per N/A arm: why (from the attack's `requires` and the pair's capabilities). */
  notApplicable?: Record<string, string>;
}

/** Plays one cell with an open suite instance and policy instance. */
export function playCell(
  setup: ExecutorSetup,
  cell: Cell,
  instance: SuiteInstance,
  policy: PolicyInstance,
  /** Sees what the policy saw, each step (a page shows the episode as it plays). */
  observe?: (step: number, seen: Observation) => void,
): Promise<CellResult> {
  const na = setup.notApplicable?.[cell.arm];
  return playEpisode(
    cell,
    episodeContext(cell, {
      plan: setup.plan,
      suite: suites.get(setup.plan.suite),
      instance,
      policy,
      calibrations: setup.calibrations,
      applicable: setup.applicable[cell.arm] ?? false,
      ...(na === undefined ? {} : { notApplicableReason: na }),
      clock: systemClock,
      ...(observe ? { observe } : {}),
    }),
  );
}
