/**
 * The viewer's answers, built from `readRun`: the runs list, one run (its report without the
 * episodes, and one compact row per episode), one episode beside its benign twin, and the
 * comparison of two runs under the regression gate. The server and the bundle both use these;
 * they are assembled by ./answers.ts, which the page reading dropped files uses as well.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { ProvaelError } from "../core/errors.js";
import { reportArms } from "../report/arms.js";
import type { Report } from "../report/build.js";
import { caveats, viaOfManifest } from "../report/caveats.js";
import { readShowcaseClip } from "../report/showcase-clip.js";
import { CELL_ID, RUN_FILES } from "../rundir/files.js";
import { type FinishedRun, type RunningRun, type RunRead, readSteps } from "../rundir/read.js";
import type { ReportFile } from "../rundir/schema/index.js";
import type { PlanSpec } from "../runner/plan.js";
import {
  compareAnswer,
  episodeAnswer,
  findPair,
  partialReport,
  runAnswer,
  summarize as summarizeRead,
} from "./answers.js";
import type { Catalog, CatalogEntry } from "./catalog.js";
import { zonesFor } from "./facts.js";
import type { ComparePayload, EpisodePayload, RunPayload, RunSummary } from "./payloads.js";
import { replayPlan } from "./replay.js";

export { findPair };

/** The report of a run: its own, or one built from the episodes journalled so far. */
export function reportOf(read: RunRead): { report: ReportFile; partial: boolean } | null {
  if (read.state === "finished") return { report: read.report, partial: false };
  if (read.state !== "in-progress") return null;
  let report = partialCache.get(read);
  if (!report) {
    report = partialReport(read.header, read.episodes, reportArms(read.header.plan as PlanSpec));
    partialCache.set(read, report);
  }
  return { report, partial: true };
}

const partialCache = new WeakMap<RunningRun, ReportFile>();

export function summarize(entry: CatalogEntry, read: RunRead): RunSummary {
  return summarizeRead(entry, read, reportOf(read));
}

export function runsPayload(catalog: Catalog): RunSummary[] {
  return catalog.refresh().map((e) => summarize(e, catalog.read(e.id)));
}

export function runPayload(catalog: Catalog, id: string): RunPayload {
  const entry = catalog.entry(id);
  const read = catalog.read(id);
  const got = reportOf(read);
  return runAnswer(
    summarizeRead(entry, read, got),
    got,
    read.state === "finished" ? Object.keys(read.frames) : [],
    () =>
      got
        ? caveats(got.report, {
            dir: entry.dir,
            via: viaOfManifest(read.state === "finished" ? read.manifest : null),
          }).map((c) => c.text)
        : [],
  );
}

/** A run that can be read (finished or in progress), or a usage error naming its problem. */
export function readable(catalog: Catalog, id: string): FinishedRun | RunningRun {
  const read = catalog.read(id);
  if (read.state === "broken") {
    throw new ProvaelError("io/malformed", read.problem.message, {
      hint: "the run directory was edited or damaged",
    });
  }
  return read;
}

export function checkCell(cell: string): string {
  if (!CELL_ID.test(cell)) {
    throw new ProvaelError("config/invalid", `'${cell.slice(0, 40)}' is not a cell id`, {
      hint: "cell ids are 'c' and 20 hex digits",
    });
  }
  return cell;
}

export function episodePayload(
  catalog: Catalog,
  id: string,
  cell: string,
  /** Steps already read (a bundle reads every wanted cell in one pass). */
  known?: Map<string, import("../rundir/schema/index.js").TrajectoryStepFile[]>,
): EpisodePayload {
  const entry = catalog.entry(id);
  const read = readable(catalog, id);
  const got = reportOf(read);
  if (!got) throw new ProvaelError("run/not-found", `run ${id} has no episodes yet`);
  const report = got.report;
  const { episode, twin } = findPair(report, cell);
  const cells = twin ? [episode.cell, twin.cell] : [episode.cell];
  const steps =
    known && cells.every((c) => known.has(c))
      ? known
      : readSteps(read.dir, cells, read.state === "finished" ? "trajectories" : "journal");
  const replay = replayPlan(read);
  return episodeAnswer({
    run: summarize(entry, read),
    report,
    pair: { episode, twin },
    steps,
    zones: zonesFor(report.run.suite, episode.task),
    replay: { possible: replay.plan !== null, reason: replay.reason },
    showcaseClip: read.state === "finished" ? showcaseClipOf(read, cells) : null,
  });
}

/** The run's showcase clip when it shows one of `cells` (and its bytes are the ones named). */
export function showcaseClipOf(
  read: FinishedRun,
  cells: readonly string[],
): EpisodePayload["showcase_clip"] {
  // Checked once per clip file as it is on disk (its digest is read in full), not per request.
  const st = statSync(join(read.dir, RUN_FILES.showcaseClip), { throwIfNoEntry: false });
  const key = `${read.dir}\u0000${st?.mtimeMs ?? 0}\u0000${st?.size ?? -1}`;
  let info = clipChecks.get(key);
  if (info === undefined) {
    const clip = readShowcaseClip(read.report as unknown as Report, read.dir);
    info = clip.kind === "clip" ? clip.info : null;
    clipChecks.set(key, info);
  }
  if (info === null) return null;
  return cells.includes(info.attacked) || (info.twin !== null && cells.includes(info.twin))
    ? info
    : null;
}

const clipChecks = new Map<string, EpisodePayload["showcase_clip"]>();

/** Two runs side by side: per-arm deltas, the gate (b against a) and the pairs that changed. */
export function comparePayload(catalog: Catalog, a: string, b: string): ComparePayload {
  const side = (id: string) => {
    const read = readable(catalog, id);
    return {
      summary: summarize(catalog.entry(id), read),
      report: reportOf(read)?.report as ReportFile,
    };
  };
  return compareAnswer(side(a), side(b));
}
