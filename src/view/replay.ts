/**
 * Frames on demand. A run saves camera frames of its showcased pair only; every other episode is
 * replayed here, deterministically, from the plan the run recorded, with every camera captured
 * at every step and each predicate's judgement of every step kept beside them. The frames go to
 * a cache directory (never into the run directory: a finished run is never written to), keyed
 * by the tool version, the plan's digest and the cell, with `index.json` written last so that
 * a half-written replay is never taken for a whole one. The replay is checked against the
 * recorded episode (steps, unsafe, first unsafe step, task success): a difference is shown.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { systemClock } from "../core/clock.js";
import type { EpisodeRecord } from "../core/episode.js";
import { ProvaelError } from "../core/errors.js";
import { TOOL_VERSION } from "../core/package-root.js";
import { encodePng } from "../core/png.js";
import { REDACTED } from "../core/redact.js";
import { episodeContext, type LoadedCalibration, playEpisode } from "../kernel/index.js";
import { policies } from "../policies/index.js";
import { RUN_FILES, writeFileAtomic } from "../rundir/files.js";
import type { FinishedRun, RunningRun } from "../rundir/read.js";
import {
  FRAMES_FORMAT,
  type FramesIndex,
  frameName,
  framesIndexSchema,
  type TimelineStep,
} from "../rundir/schema/index.js";
import { type Cell, type PlanSpec, planDigest } from "../runner/plan.js";
import { planFromReport } from "../runner/replay.js";
import { suites } from "../suites/index.js";
import { differences, type Recorded, timelineWatch } from "./replay-check.js";

export interface ReplayPlan {
  plan: PlanSpec | null;
  /** Why the run cannot be replayed here (null when it can). */
  reason: string | null;
}

const hasRedacted = (v: unknown): boolean =>
  v === REDACTED ||
  (typeof v === "string" && v.includes(REDACTED)) ||
  (typeof v === "object" && v !== null && Object.values(v).some(hasRedacted));

/** The plan to replay a run's cells from, or why there is none. */
export function replayPlan(
  read: FinishedRun | RunningRun,
  calibrations: Record<string, LoadedCalibration> = {},
): ReplayPlan {
  let plan: PlanSpec;
  try {
    if (read.header) plan = read.header.plan as PlanSpec;
    else if (read.state === "finished") plan = planFromReport(read.report, RUN_FILES.report);
    else return { plan: null, reason: "the run has no plan on record" };
  } catch (e) {
    return { plan: null, reason: (e as Error).message };
  }
  const no = (reason: string): ReplayPlan => ({ plan: null, reason });
  if (read.header?.bridge || (read.state === "finished" && read.report.run.bridge))
    return no("a benchmark played this run through `provael bridge`; Provael cannot replay it");
  if (plan.plugins && plan.plugins.length > 0)
    return no("the run loaded plugin files; replay it with `provael attack --from` instead");
  if (!suites.has(plan.suite)) return no(`suite '${plan.suite}' is not registered here`);
  if (!policies.has(plan.policy)) return no(`policy '${plan.policy}' is not registered here`);
  if (policies.get(plan.policy).concurrent)
    return no(`'${plan.policy}' is a served policy: its server is not part of the run`);
  if (hasRedacted(plan.policy_options)) return no("the run's policy options hold redacted secrets");
  if (suites.get(plan.suite).capabilities.cameras.length === 0)
    return no(`suite '${plan.suite}' renders no camera`);
  for (const [task, digest] of Object.entries(plan.calibration)) {
    if (calibrations[task]?.digest !== digest)
      return no(
        `task '${task}' was scored by a calibration file (${digest.slice(0, 19)}…); pass its directory with --calib`,
      );
  }
  return { plan, reason: null };
}

/** Where a cell's replayed frames live in the cache. */
export function cacheDirFor(cacheRoot: string, plan: PlanSpec, cell: string): string {
  return join(cacheRoot, TOOL_VERSION, planDigest(plan).slice(7, 23), cell);
}

/** The cached index of a cell, when a whole replay is there. */
export function cachedFrames(dir: string): FramesIndex | null {
  const path = join(dir, "index.json");
  if (!existsSync(path)) return null;
  try {
    const parsed = framesIndexSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

export type { Recorded };

const inFlight = new Map<string, Promise<FramesIndex>>();

/**
 * Replays one cell with every camera on and writes its frames and index into `dir`; a replay of
 * the same cell already under way is shared.
 */
export function replayFrames(
  dir: string,
  plan: PlanSpec,
  calibrations: Record<string, LoadedCalibration>,
  cell: Cell,
  recorded: Recorded,
): Promise<FramesIndex> {
  const cached = cachedFrames(dir);
  if (cached) return Promise.resolve(cached);
  const running = inFlight.get(dir);
  if (running) return running;
  const job = play(dir, plan, calibrations, cell, recorded).finally(() => inFlight.delete(dir));
  inFlight.set(dir, job);
  return job;
}

async function play(
  dir: string,
  plan: PlanSpec,
  calibrations: Record<string, LoadedCalibration>,
  cell: Cell,
  recorded: Recorded,
): Promise<FramesIndex> {
  const suite = suites.get(plan.suite);
  const task = suite.tasks().find((t) => t.id === cell.task);
  if (!task) {
    throw new ProvaelError(
      "config/unknown-task",
      `suite '${plan.suite}' has no task '${cell.task}'`,
    );
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const instance = await suite.open({ cameras: suite.capabilities.cameras });
  const policy = await policies.get(plan.policy).load(plan.policy_options as never);
  const timeline: TimelineStep[] = [];
  const cameras = new Set<string>();
  const steps: number[] = [];
  let size: { width: number; height: number } | null = null;
  let current = -1;
  const watch = timelineWatch(timeline, () => current);
  let record: EpisodeRecord;
  try {
    const context = episodeContext(cell, {
      plan,
      suite,
      instance,
      policy,
      calibrations,
      watch,
      // Defended cells time their defenses (the manifest's business, not the episode's).
      clock: systemClock,
      observe: (step, seen) => {
        current = step;
        let all = true;
        for (const camera of suite.capabilities.cameras) {
          const image = seen.images[camera];
          if (!image || image.width === 0 || image.height === 0) {
            all = false;
            continue;
          }
          cameras.add(camera);
          size ??= { width: image.width, height: image.height };
          writeFileAtomic(join(dir, frameName(camera, step)), encodePng(image));
        }
        if (all) steps.push(step);
      },
    });
    ({ record } = await playEpisode(cell, context));
  } finally {
    await instance.close();
    await policy.close();
  }
  const diffs = differences(recorded, record);
  const sized = size as { width: number; height: number } | null;
  const index: FramesIndex = {
    format: FRAMES_FORMAT,
    cell: cell.id,
    source: "replay",
    cameras: [...cameras].sort(),
    steps,
    width: sized?.width ?? null,
    height: sized?.height ?? null,
    timeline,
    reproduced: { matches: diffs.length === 0, differences: diffs },
  };
  writeFileAtomic(join(dir, "index.json"), `${JSON.stringify(index)}\n`);
  return index;
}
