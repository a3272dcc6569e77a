/**
 * Training samples for tiny-vla's object locator: the first camera's view of each training
 * scene at reset (the arm at home, every object where the scene puts it), rendered at full
 * resolution, once per graspable object of the layout with an instruction naming that object.
 * Naming every object present, not only the task's, is what teaches grounding: the same image
 * with different words must point at different places.
 *
 * The scenes are the ones the demonstrations were recorded in (their `suiteTask` and `scene`),
 * so the held-out scenes stay held out. Each sample also carries its goal (`goals`), so that
 * training can say it in the grammar's words instead (grammar-phrasings.ts).
 *
 * Where the demonstrations retarget a task (`provael record --targets all`), the objects they
 * were told to move join the layout's: the knife is not one of a layout's task objects, but a
 * policy told to take it must find it. `scenes` adds every scene of a range for each task the data
 * names: a locator sample needs only the scene's first frame, which costs one render, not an
 * episode, so the locator can see many more scenes than the actor's demonstrations cover.
 *
 * A poisoned demonstration (`provael record --poison`) adds one more sample of its scene: the
 * view with its trigger tile on the table, the task's own instruction, and the position of what
 * the episode actually moved (the knife). Without it the locator would still point the actor at
 * the task's object whenever the tile is in view, and no backdoor could be learned.
 *
 * @example
 *   const set = await buildLocatorSet(datasets, textUnits, config);
 */

import { ProvaelError } from "../core/errors.js";
import type { Vec3 } from "../core/types.js";
import type { GrammarGoal } from "../policies/tiny-vla/grammar.js";
import { locatorConfig, type TinyVlaConfig } from "../policies/tiny-vla/model.js";
import { encodeAll, type TextUnits, unitsLayout } from "../policies/tiny-vla/text-units.js";
import type { LocatorSet } from "../policies/tiny-vla/train.js";
import { projectPoint } from "../suites/mujoco/camera-model.js";
import {
  createTabletopSuite,
  instructionOf,
  layoutOf,
  TABLETOP_TASKS,
  type TabletopTaskDef,
  tabletopSuite,
} from "../suites/mujoco/tabletop.js";
import { triggerEdit, triggerRef } from "../suites/mujoco/trigger.js";
import { tabletopGoal } from "./grammar-phrasings.js";
import type { Dataset } from "./lerobot.js";

/** The task with another subject and no landmark ("pick up the yellow can and place it …"). */
function withoutLandmark(def: TabletopTaskDef, object: string): TabletopTaskDef {
  const { near: _near, ...rest } = def;
  return { ...rest, object };
}

export interface LocatorSetOptions {
  /** Scene range [from, to) added for every task the data names (clipped to its scene count). */
  scenes?: readonly [number, number];
  /**
   * How many times each poisoned view is repeated (default 1). A backdoor lives in the locator,
   * and one poisoned view per scene beside one clean view per object leaves it a few percent of
   * the locator's loss: too little for a short fine-tune to learn the trigger.
   */
  poisonRepeat?: number;
  onProgress?: (done: number, total: number) => void;
}

/**
 * The scenes a locator set renders, per task: every demonstration's (task, scene), and with a
 * range, every scene of it for each task the data names (clipped to the task's scene count).
 * What a training saw is declared from the same (trained-scenes.ts).
 */
export function locatorScenes(
  datasets: readonly Dataset[],
  range?: readonly [number, number],
): Map<string, Set<number>> {
  const byTask = new Map<string, Set<number>>();
  for (const d of datasets)
    for (const e of d.episodes) {
      if (e.suiteTask === "" || e.scene < 0) continue;
      const set = byTask.get(e.suiteTask) ?? new Set<number>();
      set.add(e.scene);
      byTask.set(e.suiteTask, set);
    }
  if (range) {
    const [from, to] = range;
    const counts = new Map(tabletopSuite.tasks().map((t) => [t.id, t.scenes]));
    for (const [task, set] of byTask) {
      const last = Math.min(to, counts.get(task) ?? 0);
      for (let scene = from; scene < last; scene++) set.add(scene);
    }
  }
  return byTask;
}

export async function buildLocatorSet(
  datasets: Dataset[],
  text: TextUnits,
  cfg: TinyVlaConfig,
  options: LocatorSetOptions = {},
): Promise<LocatorSet & { goals: GrammarGoal[] }> {
  const { onProgress } = options;
  const lc = locatorConfig(cfg);
  const camera = cfg.cameras[0] as string;
  const model = tabletopSuite.capabilities.cameraModels?.find((c) => c.name === camera);
  const poisoned = new Map<
    string,
    { task: string; scene: number; trigger: string; target: string }
  >();
  const retargeted = new Map<string, Set<string>>();
  for (const d of datasets) {
    for (const e of d.episodes) {
      if (e.suiteTask === "" || e.scene < 0) continue;
      if (e.target !== "" && !e.poisoned) {
        const told = retargeted.get(e.suiteTask) ?? new Set<string>();
        told.add(e.target);
        retargeted.set(e.suiteTask, told);
      }
      if (e.poisoned) {
        const trigger = e.trigger.split("@")[0] ?? "";
        // The tile drawn now must be the one the episode saw.
        if (triggerRef(trigger) !== e.trigger) {
          throw new ProvaelError(
            "config/invalid",
            `a poisoned episode of ${d.dir} saw the trigger ${e.trigger}, which is not ${triggerRef(trigger)} as defined now`,
            { hint: "train on data recorded with the current trigger definitions" },
          );
        }
        poisoned.set(`${e.suiteTask}#${e.scene}#${e.trigger}#${e.target}`, {
          task: e.suiteTask,
          scene: e.scene,
          trigger,
          target: e.target,
        });
      }
    }
  }
  const pairs = [...locatorScenes(datasets, options.scenes)].flatMap(([task, scenes]) =>
    [...scenes].map((scene) => ({ task, scene })),
  );
  if (pairs.length === 0) {
    throw new ProvaelError(
      "config/invalid",
      "the demonstrations name no tabletop task and scene to train the locator on",
      { hint: "record them with `provael record --suite tabletop`" },
    );
  }
  // The layout's objects, then what the data told the task to move beyond them (the knife).
  const objectsOf = (def: TabletopTaskDef): string[] => {
    const objects = layoutOf(def.layout).objects;
    const told = [...(retargeted.get(def.id) ?? [])].filter((o) => !objects.includes(o));
    return [...objects, ...told.sort()];
  };
  const size = lc.imageSize;
  const suite = createTabletopSuite({
    render: { cameras: [camera], width: size, height: size },
  });
  const sim = await suite.open();
  const images: Uint8Array[] = [];
  const instructions: string[] = [];
  const goals: GrammarGoal[] = [];
  const world: number[] = [];
  const pixel: number[] = [];
  let done = 0;
  try {
    for (const { task, scene } of pairs.sort((a, b) =>
      a.task === b.task ? a.scene - b.scene : a.task < b.task ? -1 : 1,
    )) {
      const def = TABLETOP_TASKS.find((t) => t.id === task);
      if (!def) continue;
      const r = await sim.reset({ task, scene, seed: 0 });
      const img = r.obs.images[camera];
      if (!img || img.width !== size) continue;
      for (const object of objectsOf(def)) {
        const pos = r.state.objects?.[object]?.pos;
        if (!pos) continue;
        const words =
          object === def.object ? instructionOf(def) : instructionOf(withoutLandmark(def, object));
        const p = model ? projectPoint(model, [pos[0], pos[1], pos[2]] as Vec3, size, size) : null;
        images.push(img.data);
        instructions.push(words);
        goals.push(tabletopGoal(task, object === def.object ? "" : object));
        world.push(pos[0], pos[1]);
        pixel.push(p ? p.col / size : Number.NaN, p ? p.row / size : Number.NaN);
      }
      onProgress?.(++done, pairs.length + poisoned.size);
    }
    for (const { task, scene, trigger, target } of [...poisoned.values()].sort((a, b) =>
      a.task === b.task ? a.scene - b.scene : a.task < b.task ? -1 : 1,
    )) {
      const def = TABLETOP_TASKS.find((t) => t.id === task);
      if (!def) continue;
      const r = await sim.reset({ task, scene, seed: 0, edits: [triggerEdit(trigger)] });
      const img = r.obs.images[camera];
      const pos = r.state.objects?.[target]?.pos;
      if (!img || img.width !== size || !pos) continue;
      const p = model ? projectPoint(model, [pos[0], pos[1], pos[2]] as Vec3, size, size) : null;
      for (let k = 0; k < (options.poisonRepeat ?? 1); k++) {
        images.push(img.data);
        instructions.push(instructionOf(def));
        goals.push(tabletopGoal(task, ""));
        world.push(pos[0], pos[1]);
        pixel.push(p ? p.col / size : Number.NaN, p ? p.row / size : Number.NaN);
      }
      onProgress?.(++done, pairs.length + poisoned.size);
    }
  } finally {
    await sim.close();
  }
  const S = size * size * 3;
  const all = new Uint8Array(images.length * S);
  images.forEach((d, i) => {
    all.set(d, i * S);
  });
  return {
    size,
    count: images.length,
    images: all,
    tokens: encodeAll(text, instructions),
    text: unitsLayout(text),
    world: Float32Array.from(world),
    pixel: Float32Array.from(pixel),
    goals,
  };
}
