/**
 * `provael merge`: joins shard directories of one plan into the report an unsharded run would
 * have written, byte for byte. It refuses shards of different plans, tool versions or weights
 * (naming the difference), reports missing cells by id, tolerates identical duplicates and
 * refuses conflicting ones. It builds the result in a temporary directory and renames it into
 * place, so a merge killed halfway leaves nothing that looks finished.
 */
import { existsSync, readdirSync, renameSync, rmdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { canonicalJson } from "../core/canonical-json.js";
import { type Clock, systemClock } from "../core/clock.js";
import { sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import { TOOL_VERSION } from "../core/package-root.js";
import type { Report } from "../report/build.js";
import { finalize } from "../report/finalize.js";
import { renderHtml } from "../report/html.js";
import { buildManifest } from "../report/manifest.js";
import { renderMarkdown } from "../report/markdown.js";
import { mergedShowcaseClip } from "../report/showcase-clip.js";
import { isCommitted, outputDigests } from "../rundir/commit.js";
import { RUN_FILES, writeFileAtomic } from "../rundir/files.js";
import type { FinishedCell } from "../rundir/journal.js";
import {
  type JournalEntry,
  type JournalHeader,
  JournalWriter,
  latestPerCell,
  readTrajectory,
  scanJournal,
} from "../rundir/journal.js";
import { claimRunDir, LOCK_FILE } from "../rundir/lock.js";
import { readReportFile } from "../rundir/report.js";
import { planCells, planDifferences } from "./plan.js";

export interface MergeResult {
  out: string;
  report: Report | null;
  digest: string | null;
  cells: number;
  duplicates: number;
  alreadyComplete: boolean;
}

export async function mergeRuns(
  dirs: string[],
  out: string,
  /** `html: false` leaves report.html out (as `provael attack --no-html`); default true. */
  options: { commandLine: string[]; clock?: Clock; html?: boolean },
): Promise<MergeResult> {
  const clock = options.clock ?? systemClock;
  const startedAt = clock.now();
  if (dirs.length === 0)
    throw new ProvaelError("config/invalid", "provael merge needs at least one --in directory");
  const shards = dirs.map((dir) => {
    const path = join(dir, RUN_FILES.journal);
    if (!existsSync(path))
      throw new ProvaelError(
        "run/not-found",
        `${dir} holds no Provael run (no ${RUN_FILES.journal})`,
      );
    if (!isCommitted(dir)) {
      throw new ProvaelError("run/incomplete", `${dir} is an unfinished shard`, {
        hint: "finish it with `provael attack --resume` and the same --shard, then merge again",
      });
    }
    const { report, bytes } = readReportFile(join(dir, RUN_FILES.report));
    return { dir, journal: scanJournal(path), report, reportDigest: sha256(bytes) };
  });
  const first = shards[0] as (typeof shards)[number];
  const head: JournalHeader = first.journal.header;
  for (const s of shards.slice(1)) {
    const h = s.journal.header;
    const diffs = planDifferences(head.plan, h.plan);
    if (diffs.length > 0 || h.plan_digest !== head.plan_digest) {
      throw new ProvaelError(
        "run/plan-mismatch",
        `${s.dir} comes from another plan than ${first.dir}: ${diffs.join("; ")}`,
      );
    }
    if (h.tool_version !== head.tool_version) {
      throw new ProvaelError(
        "run/plan-mismatch",
        `${s.dir} was written by Provael ${h.tool_version}, ${first.dir} by ${head.tool_version}`,
      );
    }
    if (h.policy_digest !== head.policy_digest) {
      throw new ProvaelError(
        "run/plan-mismatch",
        `${s.dir} played policy weights ${h.policy_digest ?? "none"}, ${first.dir} played ${head.policy_digest ?? "none"}`,
      );
    }
    if (canonicalJson(h.served_model ?? null) !== canonicalJson(head.served_model ?? null)) {
      throw new ProvaelError(
        "run/plan-mismatch",
        `${s.dir} played a served model other than ${first.dir}'s (as their servers reported it)`,
      );
    }
    if (canonicalJson(s.report.calibration) !== canonicalJson(first.report.calibration)) {
      throw new ProvaelError(
        "run/plan-mismatch",
        `${s.dir} was scored by other predicates than ${first.dir}`,
      );
    }
  }
  if (head.tool_version !== TOOL_VERSION) {
    throw new ProvaelError(
      "run/plan-mismatch",
      `the shards were written by Provael ${head.tool_version}; this is ${TOOL_VERSION}`,
      {
        hint: "merge with the version that ran the shards",
      },
    );
  }

  const merged = new Map<string, { result: JournalEntry; dir: string }>();
  let duplicates = 0;
  for (const s of shards) {
    for (const [cell, result] of latestPerCell(s.journal.entries)) {
      const prior = merged.get(cell);
      if (!prior) {
        merged.set(cell, { result, dir: s.dir });
      } else if (prior.result.lineDigest === result.lineDigest) {
        duplicates += 1;
      } else {
        throw new ProvaelError(
          "run/plan-mismatch",
          `cell ${cell} has conflicting results in ${prior.dir} and ${s.dir}`,
          {
            details: { cell },
            hint: "the same cell gave different episodes: check that the shards ran the same code and weights",
          },
        );
      }
    }
  }
  const cells = planCells(head.plan);
  const missing = cells.filter((c) => !merged.has(c.id));
  if (missing.length > 0) {
    const shown = missing.slice(0, 10).map((c) => `${c.id} (${c.task}/${c.arm}/seed ${c.seed})`);
    throw new ProvaelError(
      "run/incomplete",
      `${missing.length} cell(s) missing from the shards: ${shown.join(", ")}${missing.length > 10 ? ", …" : ""}`,
      {
        details: { missing: missing.map((c) => c.id) },
        hint: "run the missing shard(s) (provael attack --shard k/N) and merge again",
      },
    );
  }
  const expected = new Set(cells.map((c) => c.id));
  const extra = [...merged.keys()].filter((id) => !expected.has(id));
  if (extra.length > 0)
    throw new ProvaelError(
      "run/plan-mismatch",
      `cells not in the plan: ${extra.slice(0, 5).join(", ")}`,
    );

  // One merge at a time into one --out: the temporary directory is locked before anything
  // looks at --out, so a second merge is told who holds it instead of deleting the first's
  // temporary files or, once the first has renamed them into place, its finished result.
  const tmp = `${out}.merge-tmp`;
  const { lock } = claimRunDir(tmp, "--out", "provael merge");
  try {
    if (mergedAlready(out, head.plan_digest)) {
      rmSync(tmp, { recursive: true, force: true });
      return {
        out,
        report: null,
        digest: null,
        cells: cells.length,
        duplicates,
        alreadyComplete: true,
      };
    }
    // What a merge killed halfway left behind.
    for (const e of readdirSync(tmp))
      if (e !== LOCK_FILE) rmSync(join(tmp, e), { recursive: true, force: true });
    const journal = JournalWriter.create(join(tmp, RUN_FILES.journal), { ...head, shard: null });
    const journalPath = join(tmp, RUN_FILES.journal);
    const ordered: FinishedCell[] = [];
    for (const c of cells) {
      const source = (merged.get(c.id) as { result: JournalEntry }).result;
      const at = journal.append({
        type: "episode",
        record: source.record,
        trajectory: readTrajectory(source),
      });
      ordered.push({ record: source.record, path: journalPath, ...at });
    }
    journal.close();
    const { report, digest } = finalize(
      tmp,
      head.plan,
      ordered,
      head.policy_digest,
      first.report.calibration,
      null,
      null,
      head.served_model ?? null,
    );
    writeFileAtomic(join(tmp, RUN_FILES.markdown), renderMarkdown(report));
    const outputs: string[] = [RUN_FILES.trajectories, RUN_FILES.report, RUN_FILES.markdown];
    if (options.html !== false) {
      // Written before the commit point, which names them. Camera frames need a replay (`provael
      // attack` saves them; a merged page goes without); the clip is the one of the shard that
      // showcased the same pair, or the page says why it has none.
      const clip = mergedShowcaseClip(report, dirs, tmp, out);
      writeFileAtomic(join(tmp, RUN_FILES.html), await renderHtml(report, tmp, { clip }));
      outputs.push(RUN_FILES.html);
      if (clip.kind === "clip") outputs.push(RUN_FILES.showcaseClip, RUN_FILES.showcaseClipInfo);
    }
    const manifest = buildManifest({
      reportDigest: digest,
      trajectoriesDigest: report.trajectories_digest,
      planDigest: head.plan_digest,
      toolVersion: TOOL_VERSION,
      shard: null,
      startedAt,
      clock,
      commandLine: options.commandLine,
      resumed: false,
      extra: {
        merged_from: shards.map((s) => ({
          dir: s.dir,
          shard: s.journal.header.shard,
          report_digest: s.reportDigest,
        })),
      },
    });
    // The commit point, as for a run: the manifest names every output by its digest.
    writeFileAtomic(
      join(tmp, RUN_FILES.manifest),
      `${JSON.stringify({ ...manifest, outputs: outputDigests(tmp, outputs) }, null, 2)}\n`,
    );
    // --out is absent or the empty directory found above; whatever appeared there since is kept.
    if (existsSync(out)) removeEmptyOut(out);
    renameSync(tmp, out);
    // The lock came along with the rename; the merged run directory holds only its outputs.
    rmSync(join(out, LOCK_FILE), { force: true });
    return { out, report, digest, cells: cells.length, duplicates, alreadyComplete: false };
  } finally {
    lock.release();
    // A merge refused before it wrote anything leaves no trace.
    if (existsSync(tmp) && readdirSync(tmp).length === 0) rmdirSync(tmp);
  }
}

/**
 * Whether `out` already holds this plan's merged run (merging again is a no-op); any other
 * non-empty `out` is refused.
 */
function mergedAlready(out: string, planDigest: string): boolean {
  if (!existsSync(out) || readdirSync(out).length === 0) return false;
  if (
    isCommitted(out) &&
    existsSync(join(out, RUN_FILES.journal)) &&
    scanJournal(join(out, RUN_FILES.journal)).header.plan_digest === planDigest
  )
    return true;
  throw new ProvaelError(
    "run/out-exists",
    `${out} already exists and is not this plan's merged run`,
    {
      hint: "choose a new --out",
    },
  );
}

function removeEmptyOut(out: string): void {
  try {
    rmdirSync(out);
  } catch (e) {
    throw new ProvaelError(
      "run/out-exists",
      `${out} was filled by another process while this merge ran; it is left as it is`,
      { details: { out, cause: (e as Error).message }, hint: "choose a new --out" },
    );
  }
}
