/**
 * Camera models of the MuJoCo suites, read from their MJCF: where each camera sits and looks,
 * and the pixel a world point lands on. Used by attacks that place things in view and by the
 * tiny-vla locator's training targets.
 */
import { joinPath, readAssetText } from "../../core/assets.js";
import type { CameraModel, SimState, Vec3 } from "../../core/types.js";
import { defaultAssetsDir } from "./engine.js";

// The engine's own asset folder: the suite then locates its files one way, from its own module,
// also when it is bundled on its own (the engine's cross-process test does that).
export const MJCF_DIR = defaultAssetsDir();

export type { CameraModel } from "../../core/types.js";

export const numbers = (s: string | undefined): number[] =>
  (s ?? "")
    .trim()
    .split(/\s+/)
    .filter((t) => t.length > 0)
    .map(Number);

export function attr(tag: string, name: string): string | undefined {
  return new RegExp(`\\b${name}="([^"]*)"`).exec(tag)?.[1];
}

export const sub3 = (a: Vec3, b: Vec3): Vec3 => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
export const dot3 = (a: Vec3, b: Vec3) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
export const unit3 = (a: Vec3): Vec3 => {
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

let robotCameras: CameraModel[] | null = null;

/**
 * The cameras of the Provael MuJoCo arm (robot.xml), which every MuJoCo suite's scenes are built
 * on: what those suites declare as their `cameraModels`.
 */
export function robotCameraModels(): CameraModel[] {
  robotCameras ??= parseCameras(readAssetText(joinPath(MJCF_DIR, "robot.xml")));
  return robotCameras;
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
