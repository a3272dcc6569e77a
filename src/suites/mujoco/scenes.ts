/**
 * Stored scenes: fixed initial object placements per task, generated once by
 * `scripts/generate-scenes.mjs` and kept as data in `assets/scenes/<suite>.json`, so they never
 * change when code changes.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { ProvaelError } from "../../core/errors.js";
import { packageRoot } from "./engine.js";

/** Body name -> [x, y, z, yaw] (metres, radians; yaw about the world z axis). */
export type Placement = Record<string, number[]>;

const placement = z.record(z.string(), z.array(z.number().finite()).min(3).max(4));

export const sceneFileSchema = z.object({
  schema: z.literal("provael.scenes/1"),
  suite: z.string(),
  /** The script and label the scenes came from (provenance only). */
  generator: z.string(),
  tasks: z.record(z.string(), z.array(placement).min(1)),
});

export type SceneFile = z.infer<typeof sceneFileSchema>;

const cache = new Map<string, SceneFile>();

/** Path of a suite's scene file. */
export function scenePath(suite: string): string {
  return join(packageRoot(), "assets", "scenes", `${suite}.json`);
}

/** Loads and validates a suite's scene file (cached per process). */
export function loadScenes(suite: string, path = scenePath(suite)): SceneFile {
  const hit = cache.get(path);
  if (hit) return hit;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new ProvaelError("suite/load", `cannot read the scene file ${path}`, {
      cause: e,
      hint: "regenerate it with `npm run build && node scripts/generate-scenes.mjs`",
    });
  }
  const parsed = sceneFileSchema.safeParse(raw);
  if (!parsed.success || parsed.data.suite !== suite) {
    throw new ProvaelError("suite/load", `the scene file ${path} is malformed`, {
      details: { issues: parsed.success ? [`suite is not '${suite}'`] : parsed.error.issues },
    });
  }
  cache.set(path, parsed.data);
  return parsed.data;
}

/** One stored scene of a task; throws `config/invalid` for an index out of range. */
export function sceneOf(file: SceneFile, task: string, index: number): Placement {
  const scenes = file.tasks[task];
  if (scenes === undefined) {
    throw new ProvaelError("suite/load", `the scene file has no scenes for task '${task}'`, {
      details: { task },
    });
  }
  const scene = Number.isInteger(index) ? scenes[index] : undefined;
  if (scene === undefined) {
    throw new ProvaelError(
      "config/invalid",
      `scene ${index} is out of range for task '${task}' (0..${scenes.length - 1})`,
      { details: { task, scene: index, scenes: scenes.length } },
    );
  }
  return scene;
}
