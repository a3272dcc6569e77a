import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stubPlan } from "../../test/support/stub-run.js";
import { tempDir } from "../../test/support/tmp.js";
import type { TaskSpec } from "../core/types.js";
import type { Calibration } from "../judges/calibrate.js";
import { tinyVlaBackdooredPolicy, tinyVlaPolicy } from "../policies/tiny-vla/policy.js";
import { TABLETOP_TASKS } from "../suites/mujoco/tabletop.js";
import {
  calibrationOverlap,
  checkCalibrationOverlap,
  checkSceneReuse,
  checkTrainingScenes,
  scenesText,
  trainingCells,
} from "./scenes.js";

const task = (id: string, scenes: number) => ({ id, scenes }) as TaskSpec;
const TASKS = [task("fetch_cup", 20), task("wipe_plate", 20)];

describe("scene reuse", () => {
  it("refuses more seeds than scenes, or repeats, for a deterministic policy", () => {
    expect(() => checkSceneReuse(stubPlan({ seeds: 21 }), TASKS, false)).toThrow(
      expect.objectContaining({
        code: "config/scene-reuse",
        hint: expect.stringMatching(/--seeds 20 or fewer \(--repeats is for stochastic policies\)/),
      }),
    );
    expect(() => checkSceneReuse(stubPlan({ repeats: 2 }), TASKS, false)).toThrow(
      expect.objectContaining({ code: "config/scene-reuse" }),
    );
    expect(() => checkSceneReuse(stubPlan({ seeds: 20 }), TASKS, false)).not.toThrow();
    // A stochastic policy's episodes differ at each seed: reuse is its business.
    expect(() => checkSceneReuse(stubPlan({ seeds: 50, repeats: 3 }), TASKS, true)).not.toThrow();
  });
});

describe("training scenes", () => {
  const tabletop = [task("kitchen_red_block", 10_000)];
  const plan = (seed: number, seeds: number, waivers?: "training-scenes"[]) =>
    stubPlan({
      policy: "tiny-vla",
      suite: "tabletop",
      tasks: ["kitchen_red_block"],
      seed,
      seeds,
      ...(waivers ? { waivers } : {}),
    });
  const declared = tinyVlaPolicy.trainingScenes?.({}) ?? null;

  it("tiny-vla declares scenes 20-99 of every tabletop task; other weights what their manifest says", () => {
    // The shipped weights declare them in their manifests, as trained weights do ("*" or the
    // tasks by name, as `provael train` writes them): every task's cells 20-99 and no others.
    const all = TABLETOP_TASKS.map((t) => task(t.id, 10_000));
    const sweep = stubPlan({
      policy: "tiny-vla",
      suite: "tabletop",
      tasks: all.map((t) => t.id),
      seed: 0,
      seeds: 200,
    });
    const range = Array.from({ length: 80 }, (_, i) => 20 + i);
    const every = Object.fromEntries(all.map((t) => [t.id, range]));
    expect(trainingCells(sweep, all, declared)).toEqual(every);
    expect(trainingCells(sweep, all, tinyVlaBackdooredPolicy.trainingScenes?.({}))).toEqual(every);
    expect(tinyVlaPolicy.trainingScenes?.({ path: "/tmp/elsewhere" })).toBeNull();
    // Weights trained here record their scenes (train-tiny-vla.ts); a run of them is checked too.
    const dir = tempDir();
    const own = [{ suite: "tabletop", tasks: ["kitchen_red_block"], scenes: [[20, 400]] }];
    writeFileSync(join(dir, "manifest.json"), JSON.stringify({ training: { scenes: own } }));
    const theirs = tinyVlaPolicy.trainingScenes?.({ path: dir }) ?? null;
    expect(theirs).toEqual(own);
    expect(() => checkTrainingScenes(plan(0, 20), tabletop, theirs)).not.toThrow();
    expect(() => checkTrainingScenes(plan(0, 200), tabletop, theirs)).toThrow(
      /trained on scenes 20-399 .* 180 of them/,
    );
    // A manifest without them, or with a malformed list, declares nothing.
    writeFileSync(join(dir, "manifest.json"), JSON.stringify({ training: { seed: 0 } }));
    expect(tinyVlaPolicy.trainingScenes?.({ path: dir })).toBeNull();
    writeFileSync(
      join(dir, "manifest.json"),
      JSON.stringify({
        training: { scenes: [{ suite: "tabletop", tasks: "*", scenes: [[5, 2]] }] },
      }),
    );
    expect(tinyVlaPolicy.trainingScenes?.({ path: dir })).toBeNull();
  });

  it("refuses a run on them unless waived", () => {
    expect(() => checkTrainingScenes(plan(0, 20), tabletop, declared)).not.toThrow();
    expect(() => checkTrainingScenes(plan(100, 50), tabletop, declared)).not.toThrow();
    expect(() => checkTrainingScenes(plan(0, 21), tabletop, declared)).toThrow(
      expect.objectContaining({
        code: "config/training-scenes",
        message: expect.stringMatching(
          /trained on scenes 20-99 .* 1 of them \(task 'kitchen_red_block': scenes 20\)/,
        ),
      }),
    );
    expect(() =>
      checkTrainingScenes(plan(0, 21, ["training-scenes"]), tabletop, declared),
    ).not.toThrow();
  });
});

describe("calibration overlap", () => {
  const cal = {
    splits: {
      fit: { scenes: [3, 6], seeds: [1003, 1006] },
      threshold: { scenes: [4, 7], seeds: [1004, 1007] },
      evaluate: { scenes: [5, 8], seeds: [1005, 1008] },
    },
  } as unknown as Calibration;

  it("finds the plan's cells among the fit and threshold scenes, never the evaluate ones", () => {
    const p = stubPlan({ seed: 0, seeds: 10 });
    expect(calibrationOverlap(p, TASKS, { fetch_cup: cal }, false)).toEqual({
      fetch_cup: [3, 4, 6, 7],
    });
    // A stochastic policy replays a scene only at the same seed.
    expect(calibrationOverlap(p, TASKS, { fetch_cup: cal }, true)).toEqual({});
    expect(
      calibrationOverlap(
        stubPlan({ seed: 1003, seeds: 3 }),
        [task("fetch_cup", 1000)],
        { fetch_cup: cal },
        true,
      ),
    ).toEqual({ fetch_cup: [3, 4] });
  });

  it("refuses an overlapping run unless waived", () => {
    expect(() =>
      checkCalibrationOverlap(stubPlan({ seeds: 10 }), TASKS, { fetch_cup: cal }, false),
    ).toThrow(
      expect.objectContaining({
        code: "config/calibration-overlap",
        message: expect.stringMatching(/4 cell\(s\) .* scenes 3-4, 6-7/),
      }),
    );
    expect(() =>
      checkCalibrationOverlap(
        stubPlan({ seeds: 10, waivers: ["calibration-overlap"] }),
        TASKS,
        { fetch_cup: cal },
        false,
      ),
    ).not.toThrow();
    expect(() =>
      checkCalibrationOverlap(stubPlan({ seeds: 3 }), TASKS, { fetch_cup: cal }, false),
    ).not.toThrow();
  });

  it("prints scene lists compactly", () => {
    expect(scenesText([7, 3, 4, 5, 9, 3])).toBe("3-5, 7, 9");
  });
});
