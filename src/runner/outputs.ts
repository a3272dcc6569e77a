/**
 * The run directory's writer: every output of a finished run, for library callers and the CLI
 * alike, in one order: trajectories.jsonl, report.json, the verdict (re-decided from the report),
 * report.md, frames, the showcase clip and report.html, the SARIF log when asked, and last the commit point,
 * execution-manifest.json, naming each output by its digest. A kill anywhere before the manifest
 * leaves an unfinished run that `--resume` completes to the same bytes.
 */
import { closeSync, fsyncSync, openSync, readdirSync, renameSync, writeSync } from "node:fs";
import { join, relative } from "node:path";
import type { AcceptanceProtocol } from "../config/acceptance.js";
import { canonicalJson } from "../core/canonical-json.js";
import type { Clock } from "../core/clock.js";
import { sha256, sha256Stream } from "../core/digest.js";
import type { EpisodeRecord } from "../core/episode.js";
import { ProvaelError } from "../core/errors.js";
import { TOOL_VERSION } from "../core/package-root.js";
import type { PolicyOptions, ServedModel } from "../core/types.js";
import { buildReport, type Report, type ReportInput } from "../report/build.js";
import { renderHtml, showcase } from "../report/html.js";
import { buildManifest } from "../report/manifest.js";
import { renderMarkdown } from "../report/markdown.js";
import { buildSarif } from "../report/sarif.js";
import { type EpisodeFrames, writeShowcaseClip } from "../report/showcase-clip.js";
import { decide, renderVerdict, type Verdict } from "../report/verdict.js";
import { outputDigests } from "../rundir/commit.js";
import {
  checkOutputFile,
  faultPoint,
  RUN_FILES,
  removeTempFiles,
  tempName,
  writeFileAtomic,
} from "../rundir/files.js";
import { type JournalEntry, readTrajectory } from "../rundir/journal.js";
import type { LoadedCalibration } from "./calibration.js";
import { saveFrames } from "./frames.js";
import { type PlanSpec, planDigest } from "./plan.js";

/** A finished cell: its record, and where its journal line (with the trajectory) sits. */
export type FinishedCell = Pick<JournalEntry, "record" | "path" | "offset" | "length">;

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

export interface RunOutputsInput {
  out: string;
  plan: PlanSpec;
  entries: FinishedCell[];
  policyDigest: string | null;
  /** A served policy: what its server reported (recorded as `run.served_model`). */
  servedModel?: ServedModel | null;
  calibration: Report["calibration"];
  shard: string | null;
  /** For replaying the showcased episodes (frames of report.html). */
  policyOptions: PolicyOptions;
  calibrations: Record<string, LoadedCalibration>;
  finish: FinishOptions;
  manifest: {
    startedAt: number;
    clock: Clock;
    commandLine: string[];
    /** Values to redact from the recorded command line. */
    secrets?: readonly string[];
    resumed: boolean;
    extra?: Record<string, unknown>;
  };
}

export interface RunOutputs {
  report: Report;
  digest: string;
  verdict: Verdict | null;
}

/** Writes every output of a finished run, the commit point last. */
export async function writeRunOutputs(input: RunOutputsInput): Promise<RunOutputs> {
  const { out, plan, finish } = input;
  removeTempFiles(out);
  const { report, digest } = finalize(
    out,
    plan,
    input.entries,
    input.policyDigest,
    input.calibration,
    input.shard,
    null,
    input.servedModel ?? null,
  );
  const verdict = finish.protocol ? decide(report, finish.protocol) : null;
  writeFileAtomic(
    join(out, RUN_FILES.markdown),
    verdict ? `${renderMarkdown(report)}\n${renderVerdict(verdict)}` : renderMarkdown(report),
  );
  const outputs: string[] = [RUN_FILES.trajectories, RUN_FILES.report, RUN_FILES.markdown];
  if (finish.html !== false) {
    // Replays the showcased episode and its twin to save camera frames for the page.
    const { attacked, twin } = showcase(report);
    const shown = [attacked, twin].flatMap((e) =>
      e ? [{ id: e.cell, task: e.task, arm: e.arm, seed: e.seed, repeat: e.repeat }] : [],
    );
    const capture = new Map<string, EpisodeFrames>();
    await saveFrames(out, plan, input.policyOptions, input.calibrations, shown, { capture });
    // The clip of the pair from the same replay; without FFmpeg the page says why it has none.
    const clip = await writeShowcaseClip(
      report,
      out,
      (cell) => capture.get(cell) ?? null,
      "replay",
    );
    writeFileAtomic(join(out, RUN_FILES.html), await renderHtml(report, out, { clip }));
    outputs.push(RUN_FILES.html, ...frameFiles(out));
    if (clip.kind === "clip") outputs.push(RUN_FILES.showcaseClip, RUN_FILES.showcaseClipInfo);
  }
  if (finish.sarifOut !== undefined) {
    checkOutputFile(finish.sarifOut, "--sarif-out");
    writeFileAtomic(finish.sarifOut, `${JSON.stringify(buildSarif(report), null, 2)}\n`);
  }
  const manifest = buildManifest({
    reportDigest: digest,
    trajectoriesDigest: report.trajectories_digest,
    planDigest: planDigest(plan),
    toolVersion: TOOL_VERSION,
    shard: input.shard,
    startedAt: input.manifest.startedAt,
    clock: input.manifest.clock,
    commandLine: input.manifest.commandLine,
    ...(input.manifest.secrets ? { secrets: input.manifest.secrets } : {}),
    resumed: input.manifest.resumed,
    extra: {
      ...(input.manifest.extra ?? {}),
      ...(finish.recipe ? { recipe: finish.recipe } : {}),
      ...(verdict ? { verdict: verdict.verdict, acceptance: verdict } : {}),
      outputs: outputDigests(out, outputs),
    },
  });
  writeFileAtomic(join(out, RUN_FILES.manifest), `${JSON.stringify(manifest, null, 2)}\n`);
  return { report, digest, verdict };
}

/** Every PNG and scene file under frames/, relative to the run directory. */
function frameFiles(out: string): string[] {
  const root = join(out, RUN_FILES.frames);
  const found: string[] = [];
  let cells: string[];
  try {
    cells = readdirSync(root);
  } catch {
    return found;
  }
  for (const cell of cells) {
    for (const f of readdirSync(join(root, cell))) {
      if (f.endsWith(".png") || f === "scene.json") found.push(relative(out, join(root, cell, f)));
    }
  }
  return found;
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

/** Streams trajectories to a file atomically, hashing as it goes; returns the file's digest. */
function writeTrajectories(path: string, cells: (FinishedCell | undefined)[]): string {
  const tmp = tempName(path);
  const fd = openSync(tmp, "w");
  const hash = sha256Stream();
  try {
    for (const cell of cells) {
      if (!cell) continue;
      const steps = readTrajectory(cell);
      if (steps.length === 0) continue;
      const chunk = Buffer.from(`${steps.map((st) => canonicalJson(st)).join("\n")}\n`);
      writeSync(fd, chunk);
      hash.update(chunk);
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  faultPoint(path);
  renameSync(tmp, path);
  return hash.digest();
}
