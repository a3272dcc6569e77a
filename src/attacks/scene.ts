/**
 * What attacks know about a suite's scene beyond the TaskSpec: where its cameras look (to place a
 * patch near the hazard in pixels), what the task object looks like (to build a decoy of it), and
 * which way the hazard lies from the gripper (the objective of search and gradient attacks).
 * Everything is read from the suite's own MJCF files, never restated here, and every function
 * answers null when a suite does not provide what it needs, so callers degrade visibly.
 */
import { joinPath, listAssets, readAssetText } from "../core/assets.js";
import type { Rng } from "../core/rng.js";
import type { Observation, SimState, TaskSpec, Vec3 } from "../core/types.js";
import { OBJECT_WORDS } from "../suites/mujoco/objects.js";

export {
  type CameraModel,
  parseCameras,
  projectPoint,
  robotCameraModels,
} from "../suites/mujoco/camera-model.js";

import { attr, MJCF_DIR, numbers, sub3 } from "../suites/mujoco/camera-model.js";

/** Body name of the object a task manipulates ("red block" -> "red_block"). */
export function objectBodyName(task: TaskSpec): string | null {
  if (!task.object) return null;
  const phrase = task.object.toLowerCase();
  return OBJECT_WORDS.find((o) => o.phrase === phrase)?.name ?? phrase.replace(/\s+/g, "_");
}

/** What a scene object looks like: its main geom's shape, MuJoCo half sizes, colour and mass. */
export interface Appearance {
  shape: "box" | "cylinder" | "sphere";
  size: number[];
  rgba: [number, number, number, number];
  mass?: number;
}

const appearanceCache = new Map<string, Appearance | null>();

/** The appearance of a body from the MJCF files (the geom that bears the body's name). */
export function appearanceOf(body: string): Appearance | null {
  if (appearanceCache.has(body)) return appearanceCache.get(body) ?? null;
  let found: Appearance | null = null;
  for (const file of listAssets(MJCF_DIR).filter((f) => f.endsWith(".xml"))) {
    const xml = readAssetText(joinPath(MJCF_DIR, file));
    const tag = new RegExp(`<geom\\b[^>]*\\bname="${body}"[^>]*>`).exec(xml)?.[0];
    if (!tag) continue;
    const type = attr(tag, "type");
    if (type !== "box" && type !== "cylinder" && type !== "sphere") break;
    const rgba = numbers(attr(tag, "rgba"));
    const mass = attr(tag, "mass");
    found = {
      shape: type,
      size: numbers(attr(tag, "size")),
      rgba: [rgba[0] ?? 0.5, rgba[1] ?? 0.5, rgba[2] ?? 0.5, 1],
      ...(mass ? { mass: Number(mass) } : {}),
    };
    break;
  }
  appearanceCache.set(body, found);
  return found;
}

/** Colour words and the RGB (0..1) a decoy or patch uses when a suite has no model file. */
const COLOUR_WORDS: Record<string, [number, number, number]> = {
  red: [0.86, 0.12, 0.1],
  yellow: [0.97, 0.8, 0.08],
  green: [0.16, 0.62, 0.22],
  blue: [0.14, 0.3, 0.92],
  orange: [1, 0.5, 0.05],
  purple: [0.56, 0.2, 0.78],
  white: [0.95, 0.95, 0.95],
  grey: [0.5, 0.5, 0.5],
};

/** The task object's colour (0..1 RGB): from its model, else from a colour word in its name. */
export function objectColour(task: TaskSpec): [number, number, number] | null {
  const body = objectBodyName(task);
  const look = body ? appearanceOf(body) : null;
  if (look) return [look.rgba[0], look.rgba[1], look.rgba[2]];
  const word = (task.object ?? "")
    .toLowerCase()
    .split(/\s+/)
    .find((w) => w in COLOUR_WORDS);
  return word ? (COLOUR_WORDS[word] as [number, number, number]) : null;
}

/** The task object's appearance for a decoy: its model when known, else a 5 cm coloured ball. */
export function decoyAppearance(task: TaskSpec): Appearance {
  const body = objectBodyName(task);
  const look = body ? appearanceOf(body) : null;
  if (look) return look;
  const c = objectColour(task) ?? [0.5, 0.5, 0.5];
  return { shape: "sphere", size: [0.025], rgba: [c[0], c[1], c[2], 1] };
}

/** The gripper position a step's observation carries (privileged state), if any. */
export function eefOf(obs: Observation): Vec3 | null {
  return obs.privileged?.eefPos ?? null;
}

/** Unit vector from `from` toward `to`, or null when they (all but) coincide. */
export function unitToward(from: Vec3, to: Vec3): Vec3 | null {
  const d = sub3(to, from);
  const n = Math.hypot(d[0], d[1], d[2]);
  return n < 1e-9 ? null : [d[0] / n, d[1] / n, d[2] / n];
}

/** Unit vector from the gripper toward the task's hazard, or null when either is unknown. */
export function hazardDirection(task: TaskSpec, eef: Vec3 | null | undefined): Vec3 | null {
  const target = task.hazard.targetPos;
  return target && eef ? unitToward(eef, target) : null;
}

/** Names for the hazard: the task's own phrase and the scene vocabulary's aliases of it. */
export function hazardNames(task: TaskSpec): string[] {
  const phrase = task.hazard.target.replace(/^the\s+/i, "").toLowerCase();
  const words = OBJECT_WORDS.find((o) => o.phrase === phrase || o.aliases.includes(phrase));
  const names = [phrase, ...(words ? [words.phrase, ...words.aliases] : [])];
  return [...new Set(names)].map((n) => `the ${n}`);
}

/** Whether a world point lies over one of the hazard's keep-out zones (x and y only). */
export function insideZone(task: TaskSpec, p: Vec3): boolean {
  return task.hazard.zones.some(
    (z) => p[0] >= z.min[0] && p[0] <= z.max[0] && p[1] >= z.min[1] && p[1] <= z.max[1],
  );
}

/**
 * Where a task's hazards are, for controls that must push away from them: the fragile and
 * forbidden objects' current positions (from the simulator state) and the keep-out zones'
 * centres first, the primary hazard last. Each point is one the robot must not be moved toward.
 */
export function hazardPoints(task: TaskSpec, state: SimState | undefined): Vec3[] {
  const out: Vec3[] = [];
  for (const name of [...task.hazard.fragile, ...task.hazard.forbidden]) {
    const pose = state?.objects?.[name];
    if (pose) out.push(pose.pos);
  }
  // A zone by the centre of its floor: it stands on the table, so moving away from it never
  // means moving down (its mid-height can lie above a low gripper).
  for (const z of task.hazard.zones) {
    out.push([(z.min[0] + z.max[0]) / 2, (z.min[1] + z.max[1]) / 2, z.min[2]]);
  }
  if (task.hazard.targetPos) out.push(task.hazard.targetPos);
  return out;
}

/**
 * `dir` (a unit vector) turned so that it heads toward none of `points` seen from `from`. With
 * `table`, a downward component is first flipped up (striking the table is a hazard too); then
 * each point it approaches is reflected out of (d - 2 (d·u) u, which keeps its length), in order,
 * so the last point (the primary hazard in `hazardPoints`) is left behind. A reflection off a point
 * above the gripper can point it down again: then its horizontal part, rescaled to unit length,
 * is kept (still away from every point below the gripper).
 */
export function awayFrom(dir: Vec3, from: Vec3, points: readonly Vec3[], table = true): Vec3 {
  let d: Vec3 = table && dir[2] < 0 ? [dir[0], dir[1], -dir[2]] : [dir[0], dir[1], dir[2]];
  let last: Vec3 | null = null;
  for (const p of points) {
    const v = sub3(p, from);
    const n = Math.hypot(v[0], v[1], v[2]);
    if (n < 1e-9) continue;
    const u: Vec3 = [v[0] / n, v[1] / n, v[2] / n];
    last = u;
    const dot = d[0] * u[0] + d[1] * u[1] + d[2] * u[2];
    if (dot > 0) d = [d[0] - 2 * dot * u[0], d[1] - 2 * dot * u[1], d[2] - 2 * dot * u[2]];
  }
  if (table && d[2] < 0) {
    const h = Math.hypot(d[0], d[1]);
    if (h > 1e-9) return [d[0] / h, d[1] / h, 0];
    // Straight down: sideways, away from the primary hazard (or anywhere level without one).
    const away = last ? Math.hypot(last[0], last[1]) : 0;
    return last && away > 1e-9 ? [-last[0] / away, -last[1] / away, 0] : [1, 0, 0];
  }
  return d;
}

/** A direction drawn uniformly on the unit sphere. */
export function randomDirection(rng: Rng): Vec3 {
  const z = rng.uniform(-1, 1);
  const a = rng.uniform(0, 2 * Math.PI);
  const r = Math.sqrt(Math.max(0, 1 - z * z));
  return [r * Math.cos(a), r * Math.sin(a), z];
}
