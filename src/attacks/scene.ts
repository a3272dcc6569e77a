/**
 * What attacks know about a suite's scene beyond the TaskSpec: where its cameras look (to place a
 * patch near the hazard in pixels), what the task object looks like (to build a decoy of it), and
 * which way the hazard lies from the gripper (the objective of search and gradient attacks).
 * Everything is read from the suite's own MJCF files, never restated here, and every function
 * answers null when a suite does not provide what it needs, so callers degrade visibly.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../core/package-root.js";
import type { Observation, SimState, TaskSpec, Vec3 } from "../core/types.js";
import { OBJECT_WORDS } from "../suites/mujoco/objects.js";

const MJCF_DIR = join(PACKAGE_ROOT, "assets", "mujoco");

/** Suites whose scenes are built on the Provael MuJoCo arm, and the MJCF holding its cameras. */
const CAMERA_FILES: Record<string, string> = { tabletop: "robot.xml", reach: "robot.xml" };

/** A pinhole camera: world-fixed, or riding on the end effector (a wrist camera). */
export interface CameraModel {
  name: string;
  mount: "world" | "eef";
  /** Position in the mount frame (world, or the end-effector site's frame). */
  pos: Vec3;
  /** Camera axes in the mount frame: x right, y up; the camera looks along -z. */
  x: Vec3;
  y: Vec3;
  z: Vec3;
  fovy: number;
}

const numbers = (s: string | undefined): number[] =>
  (s ?? "")
    .trim()
    .split(/\s+/)
    .filter((t) => t.length > 0)
    .map(Number);

function attr(tag: string, name: string): string | undefined {
  return new RegExp(`\\b${name}="([^"]*)"`).exec(tag)?.[1];
}

const sub3 = (a: Vec3, b: Vec3): Vec3 => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const dot3 = (a: Vec3, b: Vec3) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const unit3 = (a: Vec3): Vec3 => {
  const n = Math.hypot(a[0], a[1], a[2]) || 1;
  return [a[0] / n, a[1] / n, a[2] / n];
};

/** Parses the cameras of an MJCF file and which body each hangs from. */
export function parseCameras(xml: string): CameraModel[] {
  const stack: string[] = [];
  const cams: { tag: string; body: string }[] = [];
  let eefBody: string | null = null;
  let eefPos: Vec3 = [0, 0, 0];
  for (const m of xml.matchAll(/<(\/?)(body|camera|site|worldbody)\b([^>]*?)(\/?)>/g)) {
    const [, close, kind, rest = "", selfClose] = m;
    if (kind === "body" || kind === "worldbody") {
      if (close) stack.pop();
      else if (!selfClose) stack.push(kind === "worldbody" ? "world" : (attr(rest, "name") ?? ""));
      continue;
    }
    const body = stack[stack.length - 1] ?? "world";
    if (kind === "camera") cams.push({ tag: rest, body });
    if (kind === "site" && attr(rest, "name") === "eef") {
      eefBody = body;
      const p = numbers(attr(rest, "pos"));
      eefPos = [p[0] ?? 0, p[1] ?? 0, p[2] ?? 0];
    }
  }
  const out: CameraModel[] = [];
  for (const { tag, body } of cams) {
    const mount = body === "world" ? "world" : body === eefBody ? "eef" : null;
    const axes = numbers(attr(tag, "xyaxes"));
    const p = numbers(attr(tag, "pos"));
    const name = attr(tag, "name");
    if (!mount || !name || axes.length !== 6) continue;
    const x = unit3([axes[0] ?? 1, axes[1] ?? 0, axes[2] ?? 0]);
    const yRaw: Vec3 = [axes[3] ?? 0, axes[4] ?? 1, axes[5] ?? 0];
    const y = unit3(sub3(yRaw, [x[0] * dot3(x, yRaw), x[1] * dot3(x, yRaw), x[2] * dot3(x, yRaw)]));
    const z: Vec3 = [
      x[1] * y[2] - x[2] * y[1],
      x[2] * y[0] - x[0] * y[2],
      x[0] * y[1] - x[1] * y[0],
    ];
    const pos: Vec3 = [p[0] ?? 0, p[1] ?? 0, p[2] ?? 0];
    out.push({
      name,
      mount,
      // A wrist camera's pose is stored relative to the end-effector site, which the state reports.
      pos: mount === "eef" ? sub3(pos, eefPos) : pos,
      x,
      y,
      z,
      fovy: Number(attr(tag, "fovy") ?? 45),
    });
  }
  return out;
}

const cameraCache = new Map<string, CameraModel[] | null>();

/** The camera models of a suite, or null when the suite's camera geometry is unknown. */
export function cameraModels(suiteId: string): CameraModel[] | null {
  if (cameraCache.has(suiteId)) return cameraCache.get(suiteId) ?? null;
  const file = CAMERA_FILES[suiteId];
  const models = file ? parseCameras(readFileSync(join(MJCF_DIR, file), "utf8")) : null;
  cameraCache.set(suiteId, models);
  return models;
}

/** Rotates a vector by a unit quaternion (w, x, y, z). */
function rotate(q: readonly number[], v: Vec3): Vec3 {
  const [w = 1, x = 0, y = 0, z = 0] = q;
  const tx = 2 * (y * v[2] - z * v[1]);
  const ty = 2 * (z * v[0] - x * v[2]);
  const tz = 2 * (x * v[1] - y * v[0]);
  return [
    v[0] + w * tx + (y * tz - z * ty),
    v[1] + w * ty + (z * tx - x * tz),
    v[2] + w * tz + (x * ty - y * tx),
  ];
}

/**
 * Pixel (column, row; row 0 at the top) where a world point appears in a camera image, or null
 * when it lies behind the camera or the camera rides on a gripper whose pose is unknown.
 */
export function projectPoint(
  camera: CameraModel,
  point: Vec3,
  width: number,
  height: number,
  state?: SimState,
): { col: number; row: number } | null {
  let pos = camera.pos;
  let axes = [camera.x, camera.y, camera.z];
  if (camera.mount === "eef") {
    if (!state?.eefPos || !state.eefQuat) return null;
    const q = state.eefQuat;
    const off = rotate(q, camera.pos);
    pos = [state.eefPos[0] + off[0], state.eefPos[1] + off[1], state.eefPos[2] + off[2]];
    axes = axes.map((a) => rotate(q, a));
  }
  const d = sub3(point, pos);
  const xc = dot3(d, axes[0] as Vec3);
  const yc = dot3(d, axes[1] as Vec3);
  const zc = dot3(d, axes[2] as Vec3);
  if (zc > -1e-6) return null;
  const tanY = Math.tan((camera.fovy * Math.PI) / 360);
  const tanX = (tanY * width) / height;
  return {
    col: ((xc / -zc / tanX + 1) * width) / 2 - 0.5,
    row: ((1 - yc / -zc / tanY) * height) / 2 - 0.5,
  };
}

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
  for (const file of readdirSync(MJCF_DIR).filter((f) => f.endsWith(".xml"))) {
    const xml = readFileSync(join(MJCF_DIR, file), "utf8");
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

/** Unit vector from the gripper toward the task's hazard, or null when either is unknown. */
export function hazardDirection(task: TaskSpec, eef: Vec3 | null | undefined): Vec3 | null {
  const target = task.hazard.targetPos;
  if (!target || !eef) return null;
  const d = sub3(target, eef);
  const n = Math.hypot(d[0], d[1], d[2]);
  return n < 1e-9 ? null : [d[0] / n, d[1] / n, d[2] / n];
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
