/**
 * The frames of one episode as the viewer serves them: a cached replay, a fresh replay, or the
 * few frames the run saved itself, in that order of preference; and the one function that maps
 * a frame's name to a file, inside the cache or the run's frames folder and nowhere else.
 */
import { existsSync, lstatSync } from "node:fs";
import { join } from "node:path";
import { ProvaelError } from "../core/errors.js";
import { assertInside, framesDir } from "../rundir/files.js";
import { FRAME_FILE, type FramesIndex } from "../rundir/schema/index.js";
import type { LoadedCalibration } from "../runner/calibration.js";
import { checkCell, findPair, readable, reportOf } from "./api.js";
import type { Catalog } from "./catalog.js";
import type { FramesPayload } from "./payloads.js";
import { cacheDirFor, cachedFrames, replayFrames, replayPlan } from "./replay.js";

export interface FrameSource {
  catalog: Catalog;
  /** Where replayed frames are cached. */
  cacheRoot: string;
  calibrations: Record<string, LoadedCalibration>;
}

/** The frames of a cell; replays it when it has none cached and the run can be replayed. */
export async function framesPayload(
  src: FrameSource,
  id: string,
  /** The cell id, or any unique prefix of it. */
  given: string,
  options: { replay?: boolean } = {},
): Promise<FramesPayload> {
  const read = readable(src.catalog, id);
  const report = reportOf(read)?.report;
  if (!report) throw new ProvaelError("run/not-found", `run ${id} has no episodes yet`);
  const { episode } = findPair(report, given);
  const cell = episode.cell;
  const saved: FramesIndex | null = read.state === "finished" ? (read.frames[cell] ?? null) : null;
  const { plan, reason } = replayPlan(read, src.calibrations);
  if (plan) {
    const dir = cacheDirFor(src.cacheRoot, plan, cell);
    const cached = cachedFrames(dir);
    if (cached) return { cell, index: cached, reason: null };
    if (options.replay !== false && episode.termination !== "not_applicable") {
      const index = await replayFrames(
        dir,
        plan,
        src.calibrations,
        {
          id: cell,
          task: episode.task,
          arm: episode.arm,
          seed: episode.seed,
          repeat: episode.repeat,
          ...(episode.defenses && episode.defenses.length > 0
            ? { defenses: episode.defenses }
            : {}),
        },
        {
          steps: episode.steps,
          unsafe: episode.unsafe,
          first_unsafe_step: episode.first_unsafe_step,
          task_success: episode.task_success,
          unsafe_steps: episode.unsafe_steps,
        },
      );
      return { cell, index, reason: null };
    }
  }
  const why =
    episode.termination === "not_applicable"
      ? "the arm was not applicable: nothing was played"
      : (reason ?? "frames are replayed on demand");
  return {
    cell,
    index: saved,
    reason: saved ? `only the frames the run saved are shown: ${why}` : `no frames: ${why}`,
  };
}

/**
 * The file of one frame: `name` must be a frame file name, found in the cell's cached replay or
 * in the run's own frames folder, a regular file (not a link) that resolves inside either.
 */
export function frameFile(src: FrameSource, id: string, cell: string, name: string): string {
  checkCell(cell);
  if (!FRAME_FILE.test(name)) {
    throw new ProvaelError("config/invalid", `'${name.slice(0, 60)}' is not a frame file name`, {
      hint: "frame files are <camera>-<step>.png",
    });
  }
  const read = readable(src.catalog, id);
  const candidates: [string, string][] = [];
  const { plan } = replayPlan(read, src.calibrations);
  if (plan) candidates.push([src.cacheRoot, join(cacheDirFor(src.cacheRoot, plan, cell), name)]);
  candidates.push([read.dir, join(framesDir(read.dir, cell), name)]);
  for (const [root, path] of candidates) {
    if (!existsSync(path)) continue;
    const st = lstatSync(path);
    if (!st.isFile()) continue;
    assertInside(root, path);
    return path;
  }
  throw new ProvaelError("run/not-found", `no frame ${name} for ${cell}`, {
    hint: "open the episode first: its frames are replayed on demand",
  });
}

/** The rows of a clip: the episode, and its benign twin when asked and there is one. */
export async function clipRows(
  src: FrameSource,
  id: string,
  cell: string,
  twin: boolean,
): Promise<import("./video.js").ReplayedRow[]> {
  const read = readable(src.catalog, id);
  const report = reportOf(read)?.report;
  if (!report) throw new ProvaelError("run/not-found", `run ${id} has no episodes yet`);
  // A command names an episode by any unique prefix of its id (the viewer shows 9 characters).
  const pair = findPair(report, cell);
  const episodes = [pair.episode, ...(twin && pair.twin ? [pair.twin] : [])];
  const rows: import("./video.js").ReplayedRow[] = [];
  for (const [i, e] of episodes.entries()) {
    const frames = await framesPayload(src, id, e.cell);
    if (!frames.index) {
      throw new ProvaelError(
        "run/not-found",
        `episode ${e.cell} has no frames (${frames.reason})`,
        {
          hint: "episodes are replayed for their frames; see the reason above",
        },
      );
    }
    const role =
      i === 0 ? (e.arm === report.tests.baseline_arm ? "benign" : "attacked") : "benign twin";
    rows.push({
      label: `${role}: ${e.arm} · ${e.task} · seed ${e.seed}${e.unsafe ? " · unsafe" : e.unsafe === false ? " · safe" : ""}`,
      index: frames.index,
      file: (name) => frameFile(src, id, e.cell, name),
      firstUnsafe: e.first_unsafe_step,
      fired: Object.entries(e.endpoints)
        .filter(([, ep]) => ep.unsafe)
        .map(([p]) => p),
    });
  }
  if (twin && !pair.twin && pair.episode.arm !== report.tests.baseline_arm) {
    throw new ProvaelError("run/not-found", `episode ${cell} has no benign twin in this run`, {
      hint: "drop --twin, or run the baseline arm `none` beside the attack",
    });
  }
  return rows;
}
