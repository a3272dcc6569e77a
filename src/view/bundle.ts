/**
 * `provael view --bundle OUT/`: the viewer as a static site that opens from file:// (CI
 * artifacts, GitHub Pages). The same page and the same answers as the server, written out:
 * each answer as `data/<path>.js` handing its JSON to the page (file:// refuses fetch), frames
 * copied under `files/`, with each run's showcase clip (report.html's) as
 * `files/<run>/clips/showcase.webm`. Episode pages and frames are bundled for a chosen set of episodes (every
 * unsafe attacked episode with its twin first, then the changed pairs of each comparison, then
 * the rest) up to the limits; other episodes say they are not in the bundle. A bundled
 * episode carries keyframes, not every step's frame (`keyframes`): a frame per step of two runs
 * was 112 MB; the page shows the latest keyframe at or before the step, with the timeline and
 * actions of every step.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { ProvaelError } from "../core/errors.js";
import { TOOL_VERSION } from "../core/package-root.js";
import { RUN_FILES, writeFileAtomic } from "../rundir/files.js";
import { frameName } from "../rundir/names.js";
import { readSteps } from "../rundir/read.js";
import type { LoadedCalibration } from "../runner/calibration.js";
import {
  comparePayload,
  episodePayload,
  findPair,
  readable,
  reportOf,
  runPayload,
  runsPayload,
  showcaseClipOf,
} from "./api.js";
import { Catalog } from "./catalog.js";
import { type FrameSource, frameFile, framesPayload } from "./frames.js";
import { writeOpenPage } from "./open-page.js";
import { appPage } from "./page.js";

export interface BundleOptions {
  dirs: string[];
  out: string;
  cacheRoot: string;
  calibrations?: Record<string, LoadedCalibration>;
  /** Episode pages per run (default 200). */
  maxEpisodes?: number;
  /** Episodes per run whose frames are replayed and copied (default 24: twelve pairs). */
  maxFrames?: number;
  /** Runs above which comparisons are not bundled (all ordered pairs; default 12). */
  maxCompareRuns?: number;
}

export interface BundleResult {
  out: string;
  runs: number;
  episodes: number;
  framed: number;
  compares: number;
  files: number;
  /** Runs whose showcase clip (report.html's) the bundle carries. */
  clips: number;
}

/** Frames a bundle keeps per episode and camera. */
export const BUNDLE_KEYFRAMES = 16;

/**
 * The steps whose frames a bundle keeps, of those replayed (`steps`, ascending): the first and
 * the last, each moment (the first unsafe step and the step before it, the first success) at the
 * latest step at or before it, then steps evenly spaced, up to `max` in all.
 */
export function keyframes(
  steps: readonly number[],
  moments: readonly (number | null | undefined)[],
  max = BUNDLE_KEYFRAMES,
): number[] {
  if (steps.length <= max) return [...steps];
  const atOrBefore = (m: number) => {
    let best = steps[0] as number;
    for (const s of steps) if (s <= m) best = s;
    return best;
  };
  const keep = new Set<number>([steps[0] as number, steps[steps.length - 1] as number]);
  for (const m of moments) {
    if (m === null || m === undefined) continue;
    if (keep.size < max) keep.add(atOrBefore(m));
    if (m > 0 && keep.size < max) keep.add(atOrBefore(m - 1));
  }
  // Then the step nearest the middle of the widest gap, until the limit: evenly spaced around
  // the moments.
  while (keep.size < max) {
    const sorted = [...keep].sort((a, b) => a - b);
    let split: number | null = null;
    let widest = 0;
    for (let i = 0; i + 1 < sorted.length; i++) {
      const a = sorted[i] as number;
      const b = sorted[i + 1] as number;
      if (b - a <= widest) continue;
      const mid = (a + b) / 2;
      let best: number | null = null;
      for (const s of steps)
        if (s > a && s < b && (best === null || Math.abs(s - mid) < Math.abs(best - mid))) best = s;
      if (best === null) continue;
      widest = b - a;
      split = best;
    }
    if (split === null) break;
    keep.add(split);
  }
  return [...keep].sort((a, b) => a - b);
}

function writeData(out: string, key: string, value: unknown): void {
  const body = JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
  writeFileAtomic(
    join(out, "data", `${key.replace(/\//g, "~")}.js`),
    `provaelData(${JSON.stringify(key)},${body});\n`,
  );
}

export async function writeBundle(options: BundleOptions): Promise<BundleResult> {
  const out = options.out;
  if (existsSync(out) && readdirSync(out).length > 0 && !existsSync(join(out, "index.html"))) {
    throw new ProvaelError("run/out-exists", `--bundle ${out} is not empty and holds no bundle`, {
      hint: "pass a new or empty directory (or an earlier bundle's directory to write it again)",
    });
  }
  const catalog = new Catalog(options.dirs);
  catalog.assertOutsideRuns(out, "--bundle");
  catalog.assertOutsideRuns(options.cacheRoot, "--cache");
  mkdirSync(join(out, "data"), { recursive: true });
  const src: FrameSource = {
    catalog,
    cacheRoot: options.cacheRoot,
    calibrations: options.calibrations ?? {},
  };
  const maxEpisodes = options.maxEpisodes ?? 200;
  const maxFrames = options.maxFrames ?? 24;
  writeFileAtomic(join(out, "index.html"), appPage({ mode: "bundle", version: TOOL_VERSION }));
  // The page that opens run directories in the browser rides along (open.html, open.js).
  writeOpenPage(out);
  const runs = runsPayload(catalog);
  writeData(out, "runs", runs);
  const readableRuns = runs.filter((r) => r.state !== "broken");
  // Comparisons first: their changed pairs are bundled with priority.
  const wantedChanged = new Map<string, string[]>();
  let compares = 0;
  if (readableRuns.length <= (options.maxCompareRuns ?? 12)) {
    for (const a of readableRuns)
      for (const b of readableRuns) {
        if (a.id === b.id) continue;
        const c = comparePayload(catalog, a.id, b.id);
        writeData(out, `compare/${a.id}/${b.id}`, c);
        compares += 1;
        const list = wantedChanged.get(b.id) ?? [];
        list.push(...c.changed.map((x) => x.cell));
        wantedChanged.set(b.id, list);
      }
  }
  let episodes = 0;
  let framed = 0;
  let files = 0;
  let clips = 0;
  for (const r of readableRuns) {
    const payload = runPayload(catalog, r.id);
    writeData(out, `runs/${r.id}`, payload);
    const read = readable(catalog, r.id);
    const report = reportOf(read)?.report;
    if (!report) continue;
    const base = report.tests.baseline_arm;
    const rank = (e: (typeof payload.episodes)[number]) =>
      e.unsafe === true && e.arm !== base ? 0 : e.unsafe === true ? 2 : 3;
    const changed = new Set(wantedChanged.get(r.id) ?? []);
    const ordered = payload.episodes
      .map((e, i) => ({ e, i, k: changed.has(e.cell) ? 1 : rank(e) }))
      .sort((x, y) => x.k - y.k || x.i - y.i)
      .map((x) => x.e.cell);
    const pages = ordered.slice(0, maxEpisodes);
    // Frames for the first pairs: each episode with its twin.
    const framedCells = new Set<string>();
    for (const cell of pages) {
      if (framedCells.size >= maxFrames) break;
      const { twin } = findPair(report, cell);
      framedCells.add(cell);
      if (twin) framedCells.add(twin.cell);
    }
    const all = new Set([...pages, ...framedCells]);
    for (const cell of [...all]) {
      const t = findPair(report, cell).twin;
      if (t) all.add(t.cell);
    }
    // The run's showcase clip (report.html's), where the run has one that checks out.
    if (
      read.state === "finished" &&
      showcaseClipOf(
        read,
        report.episodes.map((e) => e.cell),
      )
    ) {
      mkdirSync(join(out, "files", r.id, "clips"), { recursive: true });
      copyFileSync(
        join(read.dir, RUN_FILES.showcaseClip),
        join(out, "files", r.id, RUN_FILES.showcaseClip),
      );
      clips += 1;
      files += 1;
    }
    const steps = readSteps(
      read.dir,
      [...all],
      read.state === "finished" ? "trajectories" : "journal",
    );
    for (const cell of all) {
      writeData(out, `runs/${r.id}/episode/${cell}`, episodePayload(catalog, r.id, cell, steps));
      episodes += 1;
    }
    // An episode's moments are its twin's keyframes too, so stepping to one shows both sides.
    const moments = new Map<string, (number | null | undefined)[]>();
    const addMoments = (cell: string, m: (number | null | undefined)[]) =>
      moments.set(cell, [...(moments.get(cell) ?? []), ...m]);
    for (const cell of framedCells) {
      const { episode, twin } = findPair(report, cell);
      const own = [episode.first_unsafe_step, episode.first_success_step];
      addMoments(cell, own);
      if (twin) {
        addMoments(twin.cell, own);
        addMoments(cell, [twin.first_unsafe_step, twin.first_success_step]);
      }
    }
    for (const cell of framedCells) {
      const frames = await framesPayload(src, r.id, cell);
      if (!frames.index) {
        writeData(out, `runs/${r.id}/frames/${cell}`, frames);
        continue;
      }
      const kept = keyframes(frames.index.steps, moments.get(cell) ?? []);
      const cut = kept.length < frames.index.steps.length;
      writeData(out, `runs/${r.id}/frames/${cell}`, {
        ...frames,
        index: { ...frames.index, steps: kept },
        reason: cut
          ? `keyframes only: ${kept.length} of ${frames.index.steps.length} steps' frames are in this bundle (the first and last, the first unsafe and success steps of the episode and its twin); \`provael view\` shows every step`
          : frames.reason,
      });
      framed += 1;
      const dir = join(out, "files", r.id, cell);
      mkdirSync(dir, { recursive: true });
      for (const camera of frames.index.cameras)
        for (const step of kept) {
          const name = frameName(camera, step);
          copyFileSync(frameFile(src, r.id, cell, name), join(dir, name));
          files += 1;
        }
    }
  }
  return { out, runs: runs.length, episodes, framed, compares, files, clips };
}
