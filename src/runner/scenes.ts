/**
 * What a plan may play: the checks on (task, scene) cells made before any episode. A plan never
 * replays a scene for a deterministic policy (the copy would count as new evidence), never
 * scores a policy on the scenes it was trained on, and never scores on the scenes that fitted or
 * thresholded the calibration that scores it, unless the run says so (a waiver, recorded in the
 * plan and printed in the headline).
 */
import { ProvaelError } from "../core/errors.js";
import type { SceneRange, TaskSpec, TrainingScenes } from "../core/types.js";
import type { Calibration } from "../judges/calibrate.js";
import { sceneFor } from "../kernel/index.js";
import type { PlanSpec, Waiver } from "./plan.js";

const inRanges = (scene: number, ranges: readonly SceneRange[]) =>
  ranges.some(([a, b]) => scene >= a && scene < b);

/** "20-99, 1000-1999": ranges as people write them (inclusive ends). */
export function rangesText(ranges: readonly SceneRange[]): string {
  return ranges.map(([a, b]) => (b - a === 1 ? `${a}` : `${a}-${b - 1}`)).join(", ");
}

/** Compresses sorted scene indices into "3, 5-9, 12". */
export function scenesText(scenes: readonly number[]): string {
  const sorted = [...new Set(scenes)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && (sorted[j + 1] as number) === (sorted[j] as number) + 1) j++;
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(", ");
}

/** Whether the plan waives a check. */
export const waives = (plan: PlanSpec, w: Waiver) => (plan.waivers ?? []).includes(w);

/**
 * A deterministic policy must see each (task, scene) once: more seeds than scenes, or more than
 * one repeat, would replay an episode and count the copy as new evidence.
 */
export function checkSceneReuse(plan: PlanSpec, tasks: TaskSpec[], stochastic: boolean): void {
  if (stochastic) return;
  if (plan.repeats > 1) {
    throw new ProvaelError(
      "config/scene-reuse",
      `--repeats ${plan.repeats} replays every (task, scene) for policy '${plan.policy}', which is deterministic: each repeat would be a copy of the first`,
      {
        details: { policy: plan.policy, repeats: plan.repeats },
        hint: "drop --repeats (repeats are for stochastic policies); use more --seeds for more scenes",
      },
    );
  }
  for (const t of tasks.filter((x) => plan.tasks.includes(x.id))) {
    if (plan.seeds > t.scenes) {
      throw new ProvaelError(
        "config/scene-reuse",
        `--seeds ${plan.seeds} is more than the ${t.scenes} scenes of task '${t.id}': seed s + ${t.scenes} would replay seed s, and policy '${plan.policy}' is deterministic`,
        {
          details: { task: t.id, seeds: plan.seeds, scenes: t.scenes },
          hint: `pass --seeds ${t.scenes} or fewer (--repeats is for stochastic policies)`,
        },
      );
    }
  }
}

/** The (task, scene) cells of a plan that a policy was trained on. */
export function trainingCells(
  plan: PlanSpec,
  tasks: TaskSpec[],
  training: TrainingScenes[] | null | undefined,
): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const decl of training ?? []) {
    if (decl.suite !== plan.suite) continue;
    for (const t of tasks.filter((x) => plan.tasks.includes(x.id))) {
      if (decl.tasks !== "*" && !decl.tasks.includes(t.id)) continue;
      for (let s = 0; s < plan.seeds; s++) {
        const scene = sceneFor(plan, t, plan.seed + s);
        if (inRanges(scene, decl.scenes)) out[t.id] = [...(out[t.id] ?? []), scene];
      }
    }
  }
  return out;
}

/** Refuses to score a policy on the scenes it was trained on, unless waived. */
export function checkTrainingScenes(
  plan: PlanSpec,
  tasks: TaskSpec[],
  training: TrainingScenes[] | null | undefined,
): void {
  if (waives(plan, "training-scenes")) return;
  const hit = trainingCells(plan, tasks, training);
  const first = Object.entries(hit)[0];
  if (!first) return;
  // Declarations per group of tasks can repeat a range (a manifest's, train-tiny-vla.ts): once each.
  const declared = [
    ...new Map(
      (training ?? [])
        .filter((d) => d.suite === plan.suite)
        .flatMap((d) => d.scenes)
        .map((r) => [`${r[0]}:${r[1]}`, r] as const),
    ).values(),
  ].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const count = Object.values(hit).reduce((n, s) => n + s.length, 0);
  throw new ProvaelError(
    "config/training-scenes",
    `policy '${plan.policy}' was trained on scenes ${rangesText(declared)} of '${plan.suite}'; this run would score it on ${count} of them (task '${first[0]}': scenes ${scenesText(first[1])})`,
    {
      details: { policy: plan.policy, cells: hit },
      hint: `choose seeds outside the training scenes (e.g. --seeds ${firstGap(plan, declared)} or --seed past them), or pass --allow-training-scenes to score on them anyway (recorded in the report)`,
    },
  );
}

/** How many seeds from --seed stay clear of the ranges (for the hint). */
function firstGap(plan: PlanSpec, ranges: readonly SceneRange[]): number {
  let n = 0;
  while (n < plan.seeds && !inRanges(plan.scene_pin + plan.seed + n, ranges)) n++;
  return Math.max(1, n);
}

/**
 * The key of a (task, scene) cell for overlap. A deterministic policy replays a scene exactly; a
 * stochastic one replays it only at the same seed (its sampler is seeded by task, seed, repeat).
 */
const cellKey = (task: string, scene: number, seed: number, stochastic: boolean) =>
  stochastic ? `${task}|${scene}|${seed}` : `${task}|${scene}`;

/** The plan's cells that a calibration fitted or thresholded on, by task. */
export function calibrationOverlap(
  plan: PlanSpec,
  tasks: TaskSpec[],
  calibrations: Record<string, Calibration>,
  stochastic: boolean,
): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const t of tasks.filter((x) => plan.tasks.includes(x.id))) {
    const c = calibrations[t.id];
    if (!c) continue;
    const used = new Set<string>();
    for (const split of [c.splits.fit, c.splits.threshold]) {
      split.scenes.forEach((scene, i) => {
        used.add(cellKey(t.id, scene, split.seeds[i] as number, stochastic));
      });
    }
    for (let s = 0; s < plan.seeds; s++) {
      const seed = plan.seed + s;
      const scene = sceneFor(plan, t, seed);
      if (used.has(cellKey(t.id, scene, seed, stochastic)))
        out[t.id] = [...(out[t.id] ?? []), scene];
    }
  }
  return out;
}

/** Refuses a run that would score on its calibration's fit or threshold scenes, unless waived. */
export function checkCalibrationOverlap(
  plan: PlanSpec,
  tasks: TaskSpec[],
  calibrations: Record<string, Calibration>,
  stochastic: boolean,
): void {
  if (waives(plan, "calibration-overlap")) return;
  const hit = calibrationOverlap(plan, tasks, calibrations, stochastic);
  const first = Object.entries(hit)[0];
  if (!first) return;
  const count = Object.values(hit).reduce((n, s) => n + s.length, 0);
  throw new ProvaelError(
    "config/calibration-overlap",
    `${count} cell(s) of this run were used to fit or threshold the calibration that scores them (task '${first[0]}': scenes ${scenesText(first[1])}); its false-positive rate would be measured on its own data`,
    {
      details: { cells: hit },
      hint: "play other scenes (--seed past the calibration's, whose splits are in its file), or pass --allow-calibration-overlap (recorded in the report)",
    },
  );
}

export { calibrationRange } from "../judges/calibrate.js";
