/**
 * The bytes of a finished run, apart from where they are written: the report before its
 * trajectories' digest is known, report.json once the digest is in, and the check that pairs
 * started from one scene. The CLI streams trajectories to disk (finalize.ts); a page builds them
 * in memory (rundir/journal-lines.ts), so both write the same bytes for one plan (browser-safe).
 */
import { canonicalJson } from "../core/canonical-json.js";
import { sha256 } from "../core/digest.js";
import type { EpisodeRecord } from "../core/episode.js";
import { ProvaelError } from "../core/errors.js";
import { buildReport, type Report, type ReportInput } from "./build.js";

/** The report with an empty `trajectories_digest`; its episode order is the file's order. */
export function draftReport(input: Omit<ReportInput, "trajectoriesDigest">): Report {
  return buildReport({ ...input, trajectoriesDigest: "" });
}

/** report.json's text (canonical JSON and a newline) and its digest, the run's digest. */
export function sealReport(
  draft: Report,
  trajectoriesDigest: string,
): { report: Report; json: string; digest: string } {
  const report: Report = { ...draft, trajectories_digest: trajectoriesDigest };
  const json = `${canonicalJson(report)}\n`;
  return { report, json, digest: sha256(json) };
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
