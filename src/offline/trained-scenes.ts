/**
 * The scenes a tiny-vla training saw, as the policy declares them (`TrainingScenes`): every
 * demonstration's (task, scene), and, where the locator was trained, every scene of its
 * `--locator-scenes` range for each task the data names (locator-data.ts renders those). The
 * manifest records them so that weights trained here and run with `--policy-path` are refused
 * on their own training scenes as the shipped ones are (src/runner/scenes.ts).
 *
 * @example
 *   trainedScenes(datasets, [20, 400]) // [{ suite: "tabletop", tasks: [...], scenes: [[20, 400]] }]
 */

import type { SceneRange, TrainingScenes } from "../core/types.js";
import { tabletopSuite } from "../suites/mujoco/tabletop.js";
import type { Dataset } from "./lerobot.js";
import { locatorScenes } from "./locator-data.js";

const SUITE = "tabletop";
const SCENES = new Map(tabletopSuite.tasks().map((t) => [t.id, t.scenes]));

/** Per task, the sorted scenes of a declaration list (the inverse of `declare`). */
function perTask(decls: readonly TrainingScenes[]): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  for (const d of decls) {
    if (d.suite !== SUITE) continue;
    const tasks = d.tasks === "*" ? [...SCENES.keys()] : d.tasks;
    for (const task of tasks) {
      const set = out.get(task) ?? new Set<number>();
      for (const [from, to] of d.scenes) for (let s = from; s < to; s++) set.add(s);
      out.set(task, set);
    }
  }
  return out;
}

/** Sorted scenes as half-open ranges: 20, 21, 22, 40 -> [20, 23], [40, 41]. */
function ranges(scenes: Iterable<number>): SceneRange[] {
  const out: [number, number][] = [];
  for (const s of [...scenes].sort((a, b) => a - b)) {
    const last = out[out.length - 1];
    if (last && last[1] === s) last[1] = s + 1;
    else out.push([s, s + 1]);
  }
  return out;
}

/** Tasks with the same ranges share one declaration; tasks and declarations in a fixed order. */
function declare(byTask: Map<string, Set<number>>): TrainingScenes[] {
  const groups = new Map<string, { tasks: string[]; scenes: SceneRange[] }>();
  for (const task of [...byTask.keys()].filter((t) => SCENES.has(t)).sort()) {
    const scenes = ranges(byTask.get(task) ?? []);
    if (scenes.length === 0) continue;
    const key = JSON.stringify(scenes);
    const g = groups.get(key) ?? { tasks: [], scenes };
    g.tasks.push(task);
    groups.set(key, g);
  }
  return [...groups.values()]
    .sort((a, b) => (JSON.stringify(a.scenes) < JSON.stringify(b.scenes) ? -1 : 1))
    .map((g) => ({ suite: SUITE, tasks: g.tasks, scenes: g.scenes }));
}

/** What one training saw: demonstrations' scenes, plus the locator's range for their tasks. */
export function trainedScenes(
  datasets: readonly Dataset[],
  locatorRange?: readonly [number, number],
): TrainingScenes[] {
  return declare(locatorScenes(datasets, locatorRange));
}

/** Both lists' scenes (a fine-tune saw its initial model's scenes and its own; a join both halves'). */
export function unionScenes(
  a: readonly TrainingScenes[],
  b: readonly TrainingScenes[],
): TrainingScenes[] {
  const byTask = perTask(a);
  for (const [task, set] of perTask(b)) {
    const into = byTask.get(task) ?? new Set<number>();
    for (const s of set) into.add(s);
    byTask.set(task, into);
  }
  return declare(byTask);
}
