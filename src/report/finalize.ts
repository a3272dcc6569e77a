/**
 * A finished run's report from its journal's finished cells: trajectories.jsonl streamed in
 * report order, report.json and report.md. The runner, `provael merge` and the bridge all end a
 * run here, so one set of episodes always makes the same bytes whoever played them.
 */
import { join } from "node:path";
import type { AcceptanceProtocol } from "../config/acceptance.js";
import { canonicalJson } from "../core/canonical-json.js";
import { sha256 } from "../core/digest.js";
import type { EpisodeRecord } from "../core/episode.js";
import { ProvaelError } from "../core/errors.js";
import { TOOL_VERSION } from "../core/package-root.js";
import type { PlanSpec } from "../core/plan.js";
import type { ServedModel } from "../core/types.js";
import { checkOutputFile, RUN_FILES, writeFileAtomic } from "../rundir/files.js";
import type { FinishedCell } from "../rundir/journal.js";
import { writeTrajectories } from "../rundir/trajectories.js";
import { reportArms } from "./arms.js";
import { buildReport, type Report, type ReportInput } from "./build.js";
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

/** Every arm at one (task, seed, repeat) must have started from the same scene. */
export function checkSceneDigests(episodes: EpisodeRecord[]): void {
  const seen = new Map<string, { arm: string; digest: string }>();
  for (const e of episodes) {
    // An errored episode is never scored, so it neither sets nor fails a pairing (a bridged
    // episode refused by the live pairing check is journalled with the digest it started from).
    if (e.scene_digest === null || e.error !== null) continue;
    const key = `${e.task}|${e.seed}|${e.repeat}`;
    const first = seen.get(key);
    if (!first) seen.set(key, { arm: e.arm, digest: e.scene_digest });
    else if (first.digest !== e.scene_digest) {
      throw new ProvaelError(
        "run/scene-mismatch",
        `arms '${first.arm}' and '${e.arm}' started task '${e.task}' seed ${e.seed} from different scenes`,
        {
          details: {
            task: e.task,
            seed: e.seed,
            repeat: e.repeat,
            digests: [first.digest, e.scene_digest],
          },
          hint: "the suite's reset is not deterministic for a pinned scene; pairs would not be matched",
        },
      );
    }
  }
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
  const draft = buildReport({
    plan,
    arms: reportArms(plan),
    toolVersion: TOOL_VERSION,
    policyDigest,
    episodes: records,
    trajectoriesDigest: "",
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
  const report: Report = { ...draft, trajectories_digest: trajectoriesDigest };
  const json = `${canonicalJson(report)}\n`;
  // report.md first, so that a caller of finalize alone (the bridge) gets it; the run's writer
  // writes it again with the verdict.
  writeFileAtomic(join(out, RUN_FILES.markdown), renderMarkdown(report));
  writeFileAtomic(join(out, RUN_FILES.report), json);
  return { report, digest: sha256(json) };
}
