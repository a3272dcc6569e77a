/**
 * The run directory's writer: every output of a finished run, for library callers and the CLI
 * alike, in one order: trajectories.jsonl, report.json, the verdict (re-decided from the report),
 * report.md, frames, the showcase clip and report.html, the SARIF log when asked, and last the commit point,
 * execution-manifest.json, naming each output by its digest. A kill anywhere before the manifest
 * leaves an unfinished run that `--resume` completes to the same bytes.
 */
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import type { Clock } from "../core/clock.js";
import { TOOL_VERSION } from "../core/package-root.js";
import type { PolicyOptions, ServedModel } from "../core/types.js";
import type { Report } from "../report/build.js";
import { type FinishOptions, finalize } from "../report/finalize.js";
import { renderHtml, showcase } from "../report/html.js";
import { buildManifest } from "../report/manifest.js";
import { renderMarkdown } from "../report/markdown.js";
import { buildSarif } from "../report/sarif.js";
import { type EpisodeFrames, writeShowcaseClip } from "../report/showcase-clip.js";
import { decide, renderVerdict, type Verdict } from "../report/verdict.js";
import { outputDigests } from "../rundir/commit.js";
import { checkOutputFile, RUN_FILES, removeTempFiles, writeFileAtomic } from "../rundir/files.js";
import type { FinishedCell } from "../rundir/journal.js";
import type { LoadedCalibration } from "./calibration.js";
import { saveFrames } from "./frames.js";
import { type PlanSpec, planDigest } from "./plan.js";

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
  /** What made the run (`provael attack` or `runAttack`): words the caveats' fixes. */
  madeBy?: "attack" | "library";
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
  const via = input.madeBy ?? "attack";
  writeFileAtomic(
    join(out, RUN_FILES.markdown),
    verdict
      ? `${renderMarkdown(report, { via })}\n${renderVerdict(verdict)}`
      : renderMarkdown(report, { via }),
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
    writeFileAtomic(join(out, RUN_FILES.html), await renderHtml(report, out, { clip, via }));
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
      // Read back by what re-renders the run (`provael report --in`, the viewer).
      made_by: via,
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
