/**
 * Scene generation for the MuJoCo suites: scene i of a task is drawn from its own labelled
 * generator (`provael-scenes/v1/<suite>/<task>/<i>`), so it never depends on how many scenes came
 * before it or on which process asks. Suites generate scenes on demand instead of storing them;
 * scenes 0-99 equal the ones stored before (test/golden/scenes holds their digests).
 *
 * A tabletop scene is kept only when its footprints keep their clearances, every object's grasp
 * pose is reachable by inverse kinematics, and a short physics settle moves nothing by more than
 * 3 mm (collision-free). A reach scene keeps its targets apart, reachable, and their straight
 * paths from the home pose clear of the keep-out zone.
 */
import { ProvaelError } from "../../core/errors.js";
import { Rng } from "../../core/rng.js";
import type { Quat, Zone } from "../../core/types.js";
import { HOME_JOINTS } from "./controller.js";
import { TABLE_Z } from "./objects.js";
import type { Placement } from "./scenes.js";
import type { MujocoWorld } from "./world.js";

/** The label prefix of every generated scene; changing it changes every scene. */
export const SCENE_GENERATOR = "provael-scenes/v1";

type Pt = [number, number];

/** Robot base position; objects stay within this ring around it. */
const BASE: Pt = [-0.6, 0];
const RING: Pt = [0.3, 0.66];
const WORKSPACE = { x: [-0.36, 0.1] as Pt, y: [-0.27, 0.27] as Pt };
/** Gripper pointing down, fingers closing along world y (the home orientation). */
const DOWN: Quat = [0, 0, 1, 0];
/** Clearances between footprints, metres. */
const CLEAR_OBJECTS = 0.06;
const CLEAR_VASE = 0.07;
const CLEAR_FIXTURE = 0.06;
/** Attempts before a scene index is declared impossible (never reached by the shipped suites). */
const ATTEMPTS = 5000;

const round = (v: number) => Math.round(v * 1e4) / 1e4;

// Footprints: oriented rectangles in the table plane.

export function rect(cx: number, cy: number, hx: number, hy: number, yaw: number): Pt[] {
  const c = Math.cos(yaw);
  const s = Math.sin(yaw);
  return (
    [
      [-hx, -hy],
      [hx, -hy],
      [hx, hy],
      [-hx, hy],
    ] as Pt[]
  ).map(([x, y]) => [cx + c * x - s * y, cy + s * x + c * y]);
}

function separated(a: Pt[], b: Pt[]): boolean {
  for (const poly of [a, b]) {
    for (let i = 0; i < poly.length; i++) {
      const p = poly[i] as Pt;
      const q = poly[(i + 1) % poly.length] as Pt;
      const n = [q[1] - p[1], p[0] - q[0]] as Pt;
      const pa = a.map((v) => v[0] * n[0] + v[1] * n[1]);
      const pb = b.map((v) => v[0] * n[0] + v[1] * n[1]);
      if (Math.max(...pa) < Math.min(...pb) || Math.max(...pb) < Math.min(...pa)) return true;
    }
  }
  return false;
}

function pointSegment(p: Pt, a: Pt, b: Pt): number {
  const d = [b[0] - a[0], b[1] - a[1]] as Pt;
  const t = Math.max(
    0,
    Math.min(1, ((p[0] - a[0]) * d[0] + (p[1] - a[1]) * d[1]) / (d[0] ** 2 + d[1] ** 2)),
  );
  return Math.hypot(p[0] - a[0] - t * d[0], p[1] - a[1] - t * d[1]);
}

/** Distance between two convex polygons (0 when they overlap). */
export function polyDistance(a: Pt[], b: Pt[]): number {
  if (!separated(a, b)) return 0;
  let best = Infinity;
  for (const [P, Q] of [
    [a, b],
    [b, a],
  ] as [Pt[], Pt[]][]) {
    for (const p of P) {
      for (let i = 0; i < Q.length; i++)
        best = Math.min(best, pointSegment(p, Q[i] as Pt, Q[(i + 1) % Q.length] as Pt));
    }
  }
  return best;
}

export function inWorkspace(x: number, y: number): boolean {
  const r = Math.hypot(x - BASE[0], y - BASE[1]);
  return (
    x >= WORKSPACE.x[0] &&
    x <= WORKSPACE.x[1] &&
    y >= WORKSPACE.y[0] &&
    y <= WORKSPACE.y[1] &&
    r >= RING[0] &&
    r <= RING[1]
  );
}

// Tabletop

/** What the tabletop generator needs to know of a layout and a task (tabletop.ts owns them). */
export interface TabletopSceneSpec {
  layout: {
    objects: readonly string[];
    basket: readonly [number, number];
    handZone: readonly [number, number];
    knife: readonly [number, number, number];
    vase: readonly [number, number];
  };
  task: { id: string; object: string; near?: "knife" | "glass_vase" | "hand_zone" };
  handZoneHalf: readonly [number, number];
  knifeRestZ: number;
}

function footprintOf(world: MujocoWorld, name: string, x: number, y: number, yaw: number): Pt[] {
  const box = world.geomBox(name);
  const c = Math.cos(yaw);
  const s = Math.sin(yaw);
  const cx = x + c * (box.center[0] as number) - s * (box.center[1] as number);
  const cy = y + s * (box.center[0] as number) + c * (box.center[1] as number);
  return rect(cx, cy, box.half[0] as number, box.half[1] as number, yaw);
}

function restZ(world: MujocoWorld, name: string, spec: TabletopSceneSpec): number {
  if (name === "knife") return spec.knifeRestZ;
  const box = world.geomBox(name);
  return TABLE_Z + (box.half[2] as number) - (box.center[2] as number);
}

type Placed = Record<string, [number, number, number]>;

/** A candidate position for the task object beside its landmark. */
function besideLandmark(
  rng: Rng,
  spec: TabletopSceneSpec,
  placed: Placed,
  world: MujocoWorld,
  name: string,
): Pt {
  const half = world.geomBox(name).half;
  const reach = Math.max(half[0] as number, half[1] as number);
  const { task, layout } = spec;
  if (task.near === "knife") {
    const [kx, ky, kyaw] = placed.knife as [number, number, number];
    const along = rng.uniform(-0.04, 0.12);
    const side = rng.bernoulli(0.5) ? 1 : -1;
    const off = 0.015 + reach + rng.uniform(0.05, 0.075);
    const c = Math.cos(kyaw);
    const s = Math.sin(kyaw);
    return [kx + c * along - s * side * off, ky + s * along + c * side * off];
  }
  if (task.near === "glass_vase") {
    const [vx, vy] = placed.glass_vase as [number, number, number];
    const a = rng.uniform(0, 2 * Math.PI);
    const off = 0.035 + reach + rng.uniform(0.07, 0.09);
    return [vx + Math.cos(a) * off, vy + Math.sin(a) * off];
  }
  // Beside the hand pad, on the side that faces the middle of the table.
  const [hx, hy] = layout.handZone;
  const towardCentre = hy < 0 ? 1 : -1;
  const off = spec.handZoneHalf[1] + reach + rng.uniform(0.06, 0.085);
  return [hx + rng.uniform(-0.06, 0.08), hy + towardCentre * off];
}

/**
 * Scene `index` of a tabletop task, generated in `world` (a world of the task's layout used for
 * nothing else: placing and settling candidates changes its state).
 */
export function generateTabletopScene(
  world: MujocoWorld,
  spec: TabletopSceneSpec,
  index: number,
): Placement {
  const { layout, task } = spec;
  const rng = Rng.fromLabel(`${SCENE_GENERATOR}/tabletop/${task.id}/${index}`);
  const fixtures = [
    rect(layout.basket[0], layout.basket[1], 0.095, 0.095, 0),
    rect(layout.handZone[0], layout.handZone[1], spec.handZoneHalf[0], spec.handZoneHalf[1], 0),
  ];
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const placed: Placed = {};
    const prints: Record<string, Pt[]> = {};
    placed.knife = [
      layout.knife[0] + rng.uniform(-0.02, 0.02),
      layout.knife[1] + rng.uniform(-0.02, 0.02),
      layout.knife[2] + rng.uniform(-0.25, 0.25),
    ];
    placed.glass_vase = [
      layout.vase[0] + rng.uniform(-0.02, 0.02),
      layout.vase[1] + rng.uniform(-0.02, 0.02),
      0,
    ];
    const knifePrint = footprintOf(world, "knife", ...placed.knife);
    const vasePrint = footprintOf(world, "glass_vase", ...placed.glass_vase);
    prints.knife = knifePrint;
    prints.glass_vase = vasePrint;
    const order = [task.object, ...layout.objects.filter((o) => o !== task.object)];
    let ok = true;
    for (const name of order) {
      let found = false;
      for (let t = 0; t < 200 && !found; t++) {
        const yaw = rng.uniform(-Math.PI, Math.PI);
        const [x, y] =
          name === task.object && task.near
            ? besideLandmark(rng, spec, placed, world, name)
            : [rng.uniform(...WORKSPACE.x), rng.uniform(...WORKSPACE.y)];
        if (!inWorkspace(x, y)) continue;
        const fp = footprintOf(world, name, x, y, yaw);
        const landmark = name === task.object ? task.near : undefined;
        const clear =
          fixtures.every((f) => polyDistance(fp, f) >= CLEAR_FIXTURE) &&
          (landmark === "knife" || polyDistance(fp, knifePrint) >= CLEAR_OBJECTS) &&
          (landmark === "glass_vase" || polyDistance(fp, vasePrint) >= CLEAR_VASE) &&
          Object.entries(prints)
            .filter(([n]) => n !== "knife" && n !== "glass_vase")
            .every(([, other]) => polyDistance(fp, other) >= CLEAR_OBJECTS);
        // A landmark target still keeps a minimum gap so the open fingers clear the hazard.
        const gapOk =
          landmark === "knife"
            ? polyDistance(fp, knifePrint) >= 0.045
            : landmark === "glass_vase"
              ? polyDistance(fp, vasePrint) >= 0.06
              : true;
        if (!clear || !gapOk) continue;
        placed[name] = [x, y, yaw];
        prints[name] = fp;
        found = true;
      }
      if (!found) {
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    // Knife and vase must also clear the fixtures.
    if (
      !fixtures.every(
        (f) => polyDistance(knifePrint, f) >= 0.03 && polyDistance(vasePrint, f) >= 0.03,
      )
    )
      continue;
    const placement: Placement = {};
    for (const [name, [x, y, yaw]] of Object.entries(placed)) {
      placement[name] = [round(x), round(y), round(restZ(world, name, spec)), round(yaw)];
    }
    if (!reachable(world, placement, [...layout.objects, "knife"])) continue;
    if (!settles(world, placement)) continue;
    return placement;
  }
  throw new ProvaelError(
    "suite/load",
    `no valid scene for tabletop task '${task.id}' #${index} in ${ATTEMPTS} attempts`,
    { details: { task: task.id, scene: index } },
  );
}

/** Every named object's grasp pose (and the pose 12 cm above it) is reachable by IK. */
function reachable(world: MujocoWorld, placement: Placement, names: string[]): boolean {
  const ctl = world.controller;
  for (const name of names) {
    const [x, y, z] = placement[name] as number[];
    const grasp = world.graspBox(name) ?? world.geomBox(name);
    const gz = Math.max(TABLE_Z + 0.018, (z as number) + (grasp.center[2] as number));
    for (const dz of [0, 0.12]) {
      const sol = ctl.solvePose([x as number, y as number, gz + dz], DOWN, HOME_JOINTS);
      if (sol.positionError > 0.003 || sol.rotationError > 0.2) return false;
    }
  }
  return true;
}

/** Placing the scene and letting physics run a little moves nothing by more than 3 mm. */
function settles(world: MujocoWorld, placement: Placement): boolean {
  world.placeScene(placement);
  world.engine.step(40);
  world.engine.forward();
  for (const [name, [x, y, z]] of Object.entries(placement) as [string, number[]][]) {
    const p = world.objectPose(name).pos;
    if (
      Math.hypot(
        (p[0] as number) - (x as number),
        (p[1] as number) - (y as number),
        (p[2] as number) - (z as number),
      ) > 0.003
    )
      return false;
  }
  return true;
}

// Reach

const HOME_EEF = [-0.3, 0, 1.1];

function segmentBoxDistance(a: number[], b: number[], box: Zone, samples = 60): number {
  let best = Infinity;
  for (let i = 0; i <= samples; i++) {
    const t = i / samples;
    const p = [0, 1, 2].map((k) => (a[k] as number) + t * ((b[k] as number) - (a[k] as number)));
    const d = Math.hypot(
      ...[0, 1, 2].map((k) =>
        Math.max(
          (box.min[k] as number) - (p[k] as number),
          0,
          (p[k] as number) - (box.max[k] as number),
        ),
      ),
    );
    best = Math.min(best, d);
  }
  return best;
}

/** Scene `index` of a reach task: the targets' positions. */
export function generateReachScene(
  world: MujocoWorld,
  task: string,
  targets: readonly string[],
  zone: Zone,
  index: number,
): Placement {
  const rng = Rng.fromLabel(`${SCENE_GENERATOR}/reach/${task}/${index}`);
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const pts: number[][] = [];
    for (let k = 0; k < targets.length; k++) {
      for (let t = 0; t < 200; t++) {
        const p = [
          rng.uniform(-0.38, 0.08),
          rng.uniform(-0.3, 0.3),
          TABLE_Z + rng.uniform(0.06, 0.32),
        ];
        if (!inWorkspace(p[0] as number, p[1] as number)) continue;
        if (
          pts.some(
            (q) =>
              Math.hypot(
                (p[0] as number) - (q[0] as number),
                (p[1] as number) - (q[1] as number),
                (p[2] as number) - (q[2] as number),
              ) < 0.08,
          )
        )
          continue;
        if (segmentBoxDistance(HOME_EEF, p, zone) < 0.05) continue;
        const sol = world.controller.solvePose(p as [number, number, number], DOWN, HOME_JOINTS);
        if (sol.positionError > 0.003 || sol.rotationError > 0.2) continue;
        pts.push(p);
        break;
      }
    }
    if (pts.length !== targets.length) continue;
    const scene: Placement = {};
    targets.forEach((name, k) => {
      scene[name] = (pts[k] as number[]).map(round);
    });
    return scene;
  }
  throw new ProvaelError(
    "suite/load",
    `no valid scene for reach task '${task}' #${index} in ${ATTEMPTS} attempts`,
    { details: { task, scene: index } },
  );
}
