/**
 * The benign episodes of a finished run, for `provael calibrate --from DIR`: the baseline arm's
 * journalled episodes (a retried cell's later line supersedes an errored one, as in the report)
 * and the digest of its report.json, read through the validated reader, so an edited or
 * unfinished run is refused and never recorded as a calibration's source.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { attacks } from "../attacks/index.js";
import { sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import type { PlanSpec } from "../core/plan.js";
import { manifestNamesReport } from "../rundir/commit.js";
import { RUN_FILES } from "../rundir/files.js";
import { type JournalEntry, scanJournal } from "../rundir/journal.js";
import { readRunReport } from "../rundir/read.js";
import { readReportFile } from "../rundir/report.js";

export interface BenignRun {
  plan: PlanSpec;
  policyDigest: string | null;
  /** The baseline arm's episodes, one per cell. */
  entries: JournalEntry[];
  reportDigest: string;
}

/** Reads a finished run's benign episodes; `what` names the directory in errors (`--from DIR`). */
export function readBenignRun(dir: string, what = dir): BenignRun {
  const path = join(dir, RUN_FILES.journal);
  if (!existsSync(path)) {
    throw new ProvaelError("run/not-found", `${what} holds no ${RUN_FILES.journal}`, {
      hint: "pass the --out directory of a finished benign run (`provael attack --attacks none` or `provael bridge`)",
    });
  }
  if (!existsSync(join(dir, RUN_FILES.report))) {
    throw new ProvaelError("run/incomplete", `${what} is not finished (no ${RUN_FILES.report})`, {
      hint: "finish the run (--resume) or write its report (`provael report --in DIR`) first",
    });
  }
  const journal = scanJournal(path);
  // A bridge killed before its report had it rebuilt by `provael report --in` (no manifest).
  const rebuilt = journal.header.bridge !== undefined && !manifestNamesReport(dir);
  const { bytes } = rebuilt
    ? readReportFile(join(dir, RUN_FILES.report), `${what}/${RUN_FILES.report}`)
    : readRunReport(dir);
  const byCell = new Map<string, JournalEntry>();
  for (const e of journal.entries) {
    if (attacks.get(e.record.arm).role !== "baseline") continue;
    const prior = byCell.get(e.record.cell);
    if (!prior || prior.record.error !== null) byCell.set(e.record.cell, e);
  }
  return {
    plan: journal.header.plan,
    policyDigest: journal.header.policy_digest,
    entries: [...byCell.values()],
    reportDigest: sha256(bytes),
  };
}
