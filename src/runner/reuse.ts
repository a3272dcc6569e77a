/**
 * `provael attack --reuse DIR`: a run of more seeds than an earlier one takes the earlier run's
 * finished episodes instead of playing them again. A cell's episode depends on its task, arm,
 * seed, repeat and defenses and on the rest of the plan (suite, policy and its options, attack
 * parameters, horizon, calibration), never on how many seeds the plan has, so the earlier run
 * may differ in `seeds` alone; its lines are copied into the new journal, and the report is the
 * one a run that played every cell would have written, byte for byte.
 *
 * What can be checked before playing is (the plan, the tool version, the directory); the
 * weights are checked once the policy is probed, before the first line is copied.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { ProvaelError } from "../core/errors.js";
import { TOOL_VERSION } from "../core/package-root.js";
import { RUN_FILES } from "../rundir/files.js";
import type { FinishedCell } from "../rundir/journal.js";
import {
  type JournalScan,
  type JournalWriter,
  latestPerCell,
  readTrajectory,
  scanJournal,
} from "../rundir/journal.js";
import { type Cell, isRecordOf, type PlanSpec, planDifferences, planDigest } from "./plan.js";

export interface ReusedRun {
  dir: string;
  journal: JournalScan;
}

/** What the execution manifest says of one reused run. */
export interface ReuseRecord {
  dir: string;
  seeds: number;
  episodes: number;
}

/** Opens the runs to take episodes from, refusing any whose episodes could differ from ours. */
export function openReused(dirs: readonly string[], plan: PlanSpec, out: string): ReusedRun[] {
  return dirs.map((dir) => {
    if (resolve(dir) === resolve(out)) {
      throw new ProvaelError("config/invalid", `--reuse ${dir} is the run directory itself`, {
        hint: "to finish the run in --out, pass --resume; --reuse names an earlier run",
      });
    }
    const path = join(dir, RUN_FILES.journal);
    if (!existsSync(path)) {
      throw new ProvaelError(
        "run/not-found",
        `--reuse ${dir} holds no Provael run (no ${RUN_FILES.journal})`,
        {
          hint: "name the directory of an earlier `provael attack` run",
        },
      );
    }
    const journal = scanJournal(path);
    const h = journal.header;
    if (h.bridge !== undefined) {
      throw new ProvaelError("config/invalid", `--reuse ${dir} is a bridged run`, {
        hint: "a bridged run's episodes were played by its benchmark; reuse a `provael attack` run",
      });
    }
    // Everything but the number of seeds must be the same plan.
    const same = { ...h.plan, seeds: plan.seeds };
    const diffs = planDifferences(same, plan);
    if (diffs.length > 0 || planDigest(same) !== planDigest(plan)) {
      throw new ProvaelError(
        "run/plan-mismatch",
        `cannot reuse ${dir}: its plan differs in more than the number of seeds (${diffs.join("; ") || "fields it does not name"})`,
        {
          details: { differences: diffs },
          hint: "reuse a run made with the same flags but --seeds, or play the plan afresh",
        },
      );
    }
    if (h.tool_version !== TOOL_VERSION) {
      throw new ProvaelError(
        "run/plan-mismatch",
        `cannot reuse ${dir}: it was played by Provael ${h.tool_version}; this is ${TOOL_VERSION}`,
        { hint: "episodes of another version may differ; play the plan afresh" },
      );
    }
    return { dir, journal };
  });
}

/** Refuses a reused run played with other weights or against another served model. */
export function checkReusedPolicy(
  reused: readonly ReusedRun[],
  policyDigest: string | null,
  servedModel: string | null,
  label: (h: JournalScan["header"]) => string | null,
): void {
  for (const { dir, journal } of reused) {
    const h = journal.header;
    if (h.policy_digest !== policyDigest) {
      throw new ProvaelError(
        "run/plan-mismatch",
        `cannot reuse ${dir}: it played policy weights ${h.policy_digest ?? "none"}, these are ${policyDigest ?? "none"}`,
        { hint: "reuse a run of these weights, or play the plan afresh" },
      );
    }
    if (label(h) !== servedModel) {
      throw new ProvaelError(
        "run/plan-mismatch",
        `cannot reuse ${dir}: its server reported another model (${label(h)}, now ${servedModel})`,
        { hint: "reuse a run against this server's model, or play the plan afresh" },
      );
    }
  }
}

/**
 * Copies into `journal` each finished episode of the reused runs that is a cell of ours not yet
 * done, marking it done. An errored episode is not taken (it is played again, as on resume);
 * where runs share a cell, the first run named wins.
 */
export function copyReused(
  reused: readonly ReusedRun[],
  cells: readonly Cell[],
  done: Map<string, FinishedCell>,
  journal: JournalWriter,
  journalPath: string,
): ReuseRecord[] {
  const ours = new Map(cells.map((c) => [c.id, c]));
  return reused.map(({ dir, journal: scan }) => {
    const latest = latestPerCell(scan.entries);
    let episodes = 0;
    // In the reused journal's order: the copy is the same whichever order cells finished in.
    for (const e of scan.entries) {
      const cell = ours.get(e.record.cell);
      if (!cell || !isRecordOf(cell, e.record) || latest.get(cell.id) !== e) continue;
      if (e.record.error !== null || done.has(cell.id)) continue;
      const at = journal.append({
        type: "episode",
        record: e.record,
        trajectory: readTrajectory(e),
      });
      done.set(cell.id, { record: e.record, path: journalPath, ...at });
      episodes += 1;
    }
    return { dir, seeds: scan.header.plan.seeds, episodes };
  });
}

/** How many of `cells` the reused runs hold a finished episode of (what `--dry-run` says). */
export function reusableCells(reused: readonly ReusedRun[], cells: readonly Cell[]): number {
  const ours = new Set(cells.map((c) => c.id));
  const found = new Set<string>();
  for (const { journal } of reused) {
    for (const e of journal.entries) {
      if (e.record.error === null && ours.has(e.record.cell)) found.add(e.record.cell);
    }
  }
  return found.size;
}
