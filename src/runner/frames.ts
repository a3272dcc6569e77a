/**
 * Sample camera frames for the HTML report. Episodes are deterministic, so instead of saving
 * frames of every episode during a run, the chosen episodes are replayed afterwards with the
 * cameras on and a few frames of what the policy received are written as
 * `frames/<cell>/<camera>-<step>.png`.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { attacks } from "../attacks/index.js";
import { encodePng } from "../core/png.js";
import type { Image, PolicyOptions } from "../core/types.js";
import { policies } from "../policies/index.js";
import { suites } from "../suites/index.js";
import type { LoadedCalibration } from "./calibration.js";
import { predicatesFor } from "./calibration.js";
import { playEpisode } from "./episode.js";
import { writeFileAtomic } from "./files.js";
import type { Cell, PlanSpec } from "./plan.js";

export interface FrameOptions {
  /** Frames per episode, evenly spread over the horizon. */
  perEpisode?: number;
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
  const instance = await suite.open({ cameras: suite.capabilities.cameras });
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
      await playEpisode(cell, {
        plan,
        suite,
        instance,
        policy,
        attack: attacks.get(cell.arm),
        applicable: true,
        task,
        predicates: predicatesFor(suite, cell.task, calibrations),
        observe: (step, seen) => {
          if (!wanted.has(step)) return;
          for (const [camera, image] of Object.entries(seen.images)) {
            if (image.width > 0 && image.height > 0)
              keep.push([step, camera, { ...image, data: image.data.slice() }]);
          }
        },
      });
      if (keep.length === 0) continue;
      mkdirSync(dir, { recursive: true });
      for (const [step, camera, image] of keep) {
        writeFileAtomic(
          join(dir, `${camera}-${String(step).padStart(4, "0")}.png`),
          encodePng(image),
        );
        written += 1;
      }
    }
  } finally {
    await instance.close();
    await policy.close();
  }
  return written;
}
