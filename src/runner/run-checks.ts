/** The checks a run makes on its plan, plugins, calibrations, defenses and journal before it plays. */

import type { PluginRecord } from "../config/plugins.js";
import { canonicalJson } from "../core/canonical-json.js";
import { ProvaelError } from "../core/errors.js";
import { resolveDefenseParams, resolveDefenses } from "../defenses/index.js";
import type { LoadedCalibration } from "../kernel/index.js";
import type { JournalEntry } from "../rundir/journal.js";
import { type Cell, isRecordOf, type PlanSpec } from "./plan.js";

/**
 * The plan with the loaded plugins recorded. A plan that already names plugins (a replay, or a
 * library caller that filled it) must name exactly the loaded files.
 */
export function withPlugins(plan: PlanSpec, plugins: PluginRecord[]): PlanSpec {
  const loaded = plugins.map(({ file, digest }) => ({ file, digest }));
  if (plan.plugins !== undefined && canonicalJson(plan.plugins) !== canonicalJson(loaded)) {
    throw new ProvaelError(
      "run/plan-mismatch",
      "the plan names other plugin files than the ones loaded",
      {
        details: { plan: plan.plugins, loaded },
        hint: "load the plugin files the plan was made with (same names and bytes)",
      },
    );
  }
  if (loaded.length === 0) {
    const { plugins: _, ...rest } = plan;
    return rest;
  }
  return { ...plan, plugins: loaded };
}

/**
 * Every journalled episode must belong to a cell of this plan (and shard), and say what that
 * cell is: a line for another plan's or another shard's cell would be counted in the report.
 */
export function checkJournalCells(
  out: string,
  entries: JournalEntry[],
  cells: Cell[],
  shard: string | null,
): void {
  const byId = new Map(cells.map((c) => [c.id, c]));
  const foreign: string[] = [];
  for (const e of entries) {
    const c = byId.get(e.record.cell);
    if (!c || !isRecordOf(c, e.record)) foreign.push(e.record.cell);
  }
  if (foreign.length > 0) {
    const ids = [...new Set(foreign)];
    throw new ProvaelError(
      "run/journal-corrupt",
      `cannot resume ${out}: the journal holds ${foreign.length} episode(s) for cells outside ${shard ? `shard ${shard} of ` : ""}the plan: ${ids.slice(0, 10).join(", ")}${ids.length > 10 ? ", …" : ""}`,
      {
        details: { cells: ids },
        hint: "the journal was edited or joined with another run's; start a new run directory",
      },
    );
  }
}

/** Calibrations must cover exactly the tasks the plan says, for this policy and suite. */
export function checkCalibrations(
  plan: PlanSpec,
  calibrations: Record<string, LoadedCalibration>,
  require: boolean,
): void {
  for (const [task, c] of Object.entries(calibrations)) {
    if (c.calibration.policy !== plan.policy || c.calibration.suite !== plan.suite) {
      throw new ProvaelError(
        "config/calibration-mismatch",
        `calibration ${c.file} is for policy '${c.calibration.policy}' on '${c.calibration.suite}', not '${plan.policy}' on '${plan.suite}'`,
        {
          hint: "pass --calib a directory calibrated for this policy and suite",
        },
      );
    }
    if (plan.calibration[task] !== c.digest)
      throw new ProvaelError(
        "internal/invariant",
        `plan and calibration disagree for task '${task}'`,
      );
  }
  if (require) {
    const missing = plan.tasks.filter((t) => !calibrations[t]);
    if (missing.length > 0) {
      throw new ProvaelError(
        "config/uncalibrated",
        `--require-calibrated: no calibration for task(s) ${missing.join(", ")}`,
        {
          details: { missing },
          hint: "run `provael calibrate` for these tasks and pass --calib DIR, or drop --require-calibrated",
        },
      );
    }
  }
}

/** The plan's defenses: known ids in loop order, valid params, only for defenses it names. */
export function checkDefensePlan(plan: PlanSpec): void {
  const d = plan.defenses;
  if (!d) return;
  const ids = resolveDefenses(d.ids);
  if (ids.join(",") !== d.ids.join(",")) {
    throw new ProvaelError(
      "config/invalid",
      `the plan's defenses must be listed in loop order (${ids.join(", ")}), got ${d.ids.join(", ")}`,
      { hint: "pass them through resolveDefenses" },
    );
  }
  for (const id of Object.keys(d.params)) {
    if (!ids.includes(id))
      throw new ProvaelError(
        "config/invalid",
        `defense params for '${id}', which the plan does not run`,
      );
  }
  for (const id of ids) resolveDefenseParams(id, d.params);
}
