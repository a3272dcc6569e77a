/** Opening a run directory for a run: refuse one that holds results, reopen a matching partial run to resume it. */

import { join } from "node:path";
import { ProvaelError } from "../core/errors.js";
import { isCommitted } from "../rundir/commit.js";
import { checkOutputDir, RUN_FILES, removeTempFiles } from "../rundir/files.js";
import { scanJournal } from "../rundir/journal.js";
import { claimRunDir, type RunLock } from "../rundir/lock.js";
import { type PlanSpec, planDifferences, planDigest } from "./plan.js";

/** Refuses to touch a directory that holds results, unless resuming a matching plan. */
export function prepareOut(
  out: string,
  plan: PlanSpec,
  resume: boolean,
  shard: string | null,
): { existing: ReturnType<typeof scanJournal> | null; lock: RunLock } {
  checkOutputDir(out, "--out");
  const { lock, entries } = claimRunDir(out, "--out", "provael attack");
  try {
    return { existing: entries ? openExisting(out, entries, plan, resume, shard) : null, lock };
  } catch (e) {
    lock.release();
    throw e;
  }
}

export function openExisting(
  out: string,
  entries: string[],
  plan: PlanSpec,
  resume: boolean,
  shard: string | null,
  tidy = true,
): ReturnType<typeof scanJournal> | null {
  const journalPath = join(out, RUN_FILES.journal);
  if (entries.includes(RUN_FILES.journal)) {
    // Finished means committed: report.json alone may be the first output of a killed finalisation.
    const finished = isCommitted(out);
    if (!resume) {
      throw new ProvaelError(
        "run/out-exists",
        `${out} already holds a ${finished ? "finished" : "partial"} run`,
        {
          details: { out, finished },
          hint: finished
            ? "choose another --out; finished results are never overwritten"
            : "pass --resume to finish it, or choose another --out",
        },
      );
    }
    const existing = scanJournal(journalPath);
    const diffs = planDifferences(existing.header.plan, plan);
    if (diffs.length > 0 || existing.header.plan_digest !== planDigest(plan)) {
      throw new ProvaelError(
        "run/plan-mismatch",
        `cannot resume ${out}: the journal was written for another plan (${diffs.join("; ")})`,
        {
          details: { differences: diffs },
          hint: "rerun with the original flags, or choose another --out",
        },
      );
    }
    if (existing.header.shard !== shard) {
      throw new ProvaelError(
        "run/plan-mismatch",
        `cannot resume ${out}: it holds shard ${existing.header.shard ?? "(none: the whole plan)"}, not ${shard ?? "the whole plan"}`,
        {
          hint: "resume with the same --shard",
        },
      );
    }
    if (tidy) removeTempFiles(out);
    return existing;
  }
  if (entries.length > 0) {
    throw new ProvaelError("run/out-exists", `${out} is not empty and holds no Provael run`, {
      details: { out, entries: entries.slice(0, 5) },
      hint: "choose an empty or new --out directory",
    });
  }
  return null;
}
