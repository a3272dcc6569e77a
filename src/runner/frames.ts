/**
 * Sample camera frames for the HTML report. Episodes are deterministic, so instead of saving
 * frames of every episode during a run, the chosen episodes are replayed afterwards with the
 * cameras on and a few frames of what the policy received are written as
 * `frames/<cell>/<camera>-<step>.png`, beside `frames/<cell>/scene.json`: where the scene's
 * objects stood at the first and the last step, and which of them the task names as target or
 * hazard, so the page's top-down plot can draw them.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { canonicalJson } from "../core/canonical-json.js";
import { encodePng } from "../core/png.js";
import type {
  HazardDescription,
  Image,
  PolicyOptions,
  SimState,
  StepResult,
  SuiteInstance,
} from "../core/types.js";
import { episodeContext, type LoadedCalibration, playEpisode } from "../kernel/index.js";
import { policies } from "../policies/index.js";
import { type EpisodeFrames, showcaseEvery } from "../report/showcase-clip.js";
import { FRAME_SCENE_SCHEMA, type FrameScene } from "../rundir/schema/index.js";
import { suites } from "../suites/index.js";
import { writeFileAtomic } from "./files.js";
import type { Cell, PlanSpec } from "./plan.js";

/** Positions of the state's objects, rounded to 0.1 mm so the bytes do not chase float noise. */
function positions(state: SimState | undefined): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const [name, pose] of Object.entries(state?.objects ?? {}))
    out[name] = Array.from(pose.pos, (v) => Math.round(v * 1e4) / 1e4);
  return out;
}

/** The instance, seen through: every reset and step leaves its state in `last`. */
function watched(instance: SuiteInstance): {
  instance: SuiteInstance;
  last: () => SimState | undefined;
} {
  let last: SimState | undefined;
  const keep = (r: StepResult): StepResult => {
    last = r.state;
    return r;
  };
  const reset: SuiteInstance["reset"] = (o) => {
    const r = instance.reset(o);
    return r instanceof Promise ? r.then(keep) : keep(r);
  };
  const step: SuiteInstance["step"] = (a) => {
    const r = instance.step(a);
    return r instanceof Promise ? r.then(keep) : keep(r);
  };
  // Every other member is the instance's own, bound to it (suites keep private state).
  const proxy = new Proxy(instance, {
    get(target, key) {
      if (key === "reset") return reset;
      if (key === "step") return step;
      const v = Reflect.get(target, key, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return { instance: proxy, last: () => last };
}

/** Object names whose words ("red_block" → "red block") appear in `text`. */
function named(names: string[], text: string): string[] {
  const t = text.toLowerCase();
  return names.filter((n) => t.includes(n.toLowerCase().replaceAll("_", " ")));
}

function frameScene(
  cell: Cell,
  instruction: string,
  hazard: HazardDescription,
  calibration: LoadedCalibration | undefined,
  start: Record<string, number[]>,
  end: Record<string, number[]>,
): FrameScene {
  const zones = calibration
    ? [
        {
          id: `calibrated_${cell.task}`,
          label: "calibrated keep-out",
          min: [...calibration.calibration.zone.min],
          max: [...calibration.calibration.zone.max],
        },
      ]
    : hazard.zones.map((z) => ({ id: z.id, label: z.label, min: [...z.min], max: [...z.max] }));
  const objects: FrameScene["objects"] = {};
  const names = Object.keys(start).sort();
  for (const name of names)
    objects[name] = { start: start[name] as number[], end: end[name] ?? null };
  const hazardObjects = new Set([
    ...named(names, hazard.target),
    ...hazard.fragile.filter((n) => n in objects),
    ...hazard.forbidden.filter((n) => n in objects),
  ]);
  return {
    schema: FRAME_SCENE_SCHEMA,
    cell: cell.id,
    task: cell.task,
    objects,
    task_objects: named(names, instruction).filter((n) => !hazardObjects.has(n)),
    hazard_objects: [...hazardObjects].sort(),
    hazards: { target: hazard.target, location: hazard.location },
    zones,
  };
}

export interface FrameOptions {
  /** Frames per episode, evenly spread over the horizon. */
  perEpisode?: number;
  /**
   * Filled with the frames of each replayed cell (kept in memory, not written) at the steps the
   * clip report.html embeds shows (one in `showcaseEvery(horizon)`): the replay that saves the
   * page's frames plays every step anyway.
   */
  capture?: Map<string, EpisodeFrames>;
}

/** Replays cells and writes their frames; returns the number of PNGs written. */
export async function saveFrames(
  out: string,
  plan: PlanSpec,
  policyOptions: PolicyOptions,
  calibrations: Record<string, LoadedCalibration>,
  cells: Cell[],
  options: FrameOptions = {},
): Promise<number> {
  const suite = suites.get(plan.suite);
  if (suite.capabilities.cameras.length === 0 || cells.length === 0) return 0;
  const per = options.perEpisode ?? 6;
  const opened = await suite.open({ cameras: suite.capabilities.cameras });
  const { instance, last } = watched(opened);
  const policy = await policies.get(plan.policy).load(policyOptions);
  let written = 0;
  try {
    for (const cell of cells) {
      const task = suite.tasks().find((t) => t.id === cell.task);
      if (!task) continue;
      const horizon = plan.horizon ?? task.horizon;
      const wanted = new Set(
        Array.from({ length: per }, (_, i) =>
          Math.round((i * (horizon - 1)) / Math.max(1, per - 1)),
        ),
      );
      const dir = join(out, "frames", cell.id);
      const keep: [number, string, Image][] = [];
      const all = new Map<string, Image>();
      const allSteps: number[] = [];
      const cameras = suite.capabilities.cameras;
      const every = showcaseEvery(horizon);
      let start: Record<string, number[]> = {};
      const context = episodeContext(cell, {
        plan,
        suite,
        instance,
        policy,
        calibrations,
        observe: (step, seen) => {
          if (step === 0) start = positions(last());
          if (options.capture && step % every === 0) {
            const shot = cameras.map((c) => seen.images[c]);
            if (shot.every((im) => im !== undefined && im.width > 0 && im.height > 0)) {
              shot.forEach((im, i) => {
                const image = im as Image;
                all.set(`${cameras[i]}/${step}`, { ...image, data: image.data.slice() });
              });
              allSteps.push(step);
            }
          }
          if (!wanted.has(step)) return;
          for (const [camera, image] of Object.entries(seen.images)) {
            if (image.width > 0 && image.height > 0)
              keep.push([step, camera, { ...image, data: image.data.slice() }]);
          }
        },
      });
      await playEpisode(cell, context);
      if (options.capture && allSteps.length > 0)
        options.capture.set(cell.id, {
          cameras: [...cameras].sort(),
          steps: allSteps,
          every,
          frame: (camera, step) => all.get(`${camera}/${step}`) ?? null,
        });
      if (keep.length === 0) continue;
      mkdirSync(dir, { recursive: true });
      if (Object.keys(start).length > 0) {
        const scene = frameScene(
          cell,
          task.instruction,
          task.hazard,
          calibrations[cell.task],
          start,
          positions(last()),
        );
        writeFileAtomic(join(dir, "scene.json"), `${canonicalJson(scene)}\n`);
      }
      for (const [step, camera, image] of keep) {
        writeFileAtomic(
          join(dir, `${camera}-${String(step).padStart(4, "0")}.png`),
          encodePng(image),
        );
        written += 1;
      }
    }
  } finally {
    await opened.close();
    await policy.close();
  }
  return written;
}
