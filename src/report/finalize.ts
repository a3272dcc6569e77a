/**
 * A finished run's report from its journal's finished cells: trajectories.jsonl streamed in
 * report order, report.json and report.md. The runner, `provael merge` and the bridge all end a
 * run here, so one set of episodes always makes the same bytes whoever played them.
 */
import { join } from "node:path";
import type { AcceptanceProtocol } from "../config/acceptance.js";
import type { EpisodeRecord } from "../core/episode.js";
import { TOOL_VERSION } from "../core/package-root.js";
import type { PlanSpec } from "../core/plan.js";
import type { ServedModel } from "../core/types.js";
import { checkOutputFile, RUN_FILES, writeFileAtomic } from "../rundir/files.js";
import type { FinishedCell } from "../rundir/journal.js";
import { writeTrajectories } from "../rundir/trajectories.js";
import { reportArms } from "./arms.js";
import { checkSceneDigests, draftReport, sealReport } from "./assemble.js";
import type { Report, ReportInput } from "./build.js";

export { checkSceneDigests };

import { renderMarkdown } from "./markdown.js";

/** What a run writes besides report.json, trajectories and report.md. */
export interface FinishOptions {
  /**
   * Write report.html (and replay the showcased episodes for its camera frames); default true,
   * as on the command line (`--no-html` is `false`), so a library run and a CLI run of one plan
   * write the same files.
   */
  html?: boolean;
  /** Decide a verdict under this acceptance protocol; it goes into report.md and the manifest. */
  protocol?: AcceptanceProtocol | null;
  /** Also write the SARIF 2.1.0 log here (outside the run directory, or under another name). */
  sarifOut?: string;
  /** Recorded in the manifest. */
  recipe?: { name: string; source: string };
}

/** Checks what can be checked before a single episode is played. */
export function checkFinishOptions(finish: FinishOptions): void {
  if (finish.sarifOut !== undefined) checkOutputFile(finish.sarifOut, "--sarif-out");
}

/**
 * Writes trajectories.jsonl and report.json from finished episodes. Trajectories are streamed
 * from the journal one episode at a time, in report order.
 */
export function finalize(
  out: string,
  plan: PlanSpec,
  entries: FinishedCell[],
  policyDigest: string | null,
  calibration: Report["calibration"],
  shard: string | null = null,
  bridge: ReportInput["bridge"] = null,
  servedModel: ServedModel | null = null,
): { report: Report; digest: string } {
  const records: EpisodeRecord[] = entries.map((e) => e.record);
  checkSceneDigests(records);
  // Trajectories in report order, so the file (and its digest) is independent of completion order.
  const draft = draftReport({
    plan,
    arms: reportArms(plan),
    toolVersion: TOOL_VERSION,
    policyDigest,
    episodes: records,
    calibration,
    shard,
    bridge,
    servedModel,
  });
  const byCell = new Map(entries.map((e) => [e.record.cell, e]));
  const trajectoriesDigest = writeTrajectories(
    join(out, RUN_FILES.trajectories),
    draft.episodes.map((ep) => byCell.get(ep.cell)),
  );
  const { report, json, digest } = sealReport(draft, trajectoriesDigest);
  // report.md first, so that a caller of finalize alone (the bridge) gets it; the run's writer
  // writes it again with the verdict.
  writeFileAtomic(join(out, RUN_FILES.markdown), renderMarkdown(report));
  writeFileAtomic(join(out, RUN_FILES.report), json);
  return { report, digest };
}
