#!/usr/bin/env node
/**
 * Generates the stored scenes of the MuJoCo suites: assets/scenes/tabletop.json and
 * assets/scenes/reach.json. Run once; the files are data and never change when code changes.
 *
 *   npm run build && node scripts/generate-scenes.mjs [--scenes 100] [--suite tabletop|reach]
 *
 * Every scene comes from its own labelled generator (`provael-scenes/v1/<suite>/<task>/<index>`),
 * so scene i never depends on how many scenes came before it. A tabletop scene is kept only when
 * its footprints keep their clearances, every object's grasp pose is reachable by inverse
 * kinematics, and a short physics settle moves nothing by more than 3 mm (collision-free).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Rng } from "../dist/core/rng.js";
import { HOME_JOINTS } from "../dist/suites/mujoco/controller.js";
import { TABLE_Z } from "../dist/suites/mujoco/objects.js";
import { REACH_TARGETS, REACH_ZONE } from "../dist/suites/mujoco/reach.js";
import {
  BASKET_INNER_HALF,
  HAND_ZONE_HALF,
  KNIFE_REST_Z,
  TABLETOP_LAYOUTS,
  TABLETOP_TASKS,
} from "../dist/suites/mujoco/tabletop.js";
import { DEFAULT_RENDER, MujocoWorld } from "../dist/suites/mujoco/world.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({
  options: { scenes: { type: "string", default: "100" }, suite: { type: "string" } },
});
const SCENES = Number(values.scenes);

/** Robot base position; objects stay within this ring around it. */
const BASE = [-0.6, 0];
const RING = [0.3, 0.66];
const WORKSPACE = { x: [-0.36, 0.1], y: [-0.27, 0.27] };
/** Gripper pointing down, fingers closing along world y (the home orientation). */
const DOWN = [0, 0, 1, 0];
/** Clearances between footprints, metres. */
const CLEAR_OBJECTS = 0.06;
const CLEAR_VASE = 0.07;
const CLEAR_FIXTURE = 0.06;

const round = (v) => Math.round(v * 1e4) / 1e4;

// ---------------------------------------------------------------------------------------------
// Footprints: oriented rectangles in the table plane.

function rect(cx, cy, hx, hy, yaw) {
  const c = Math.cos(yaw);
  const s = Math.sin(yaw);
  return [
    [-hx, -hy],
    [hx, -hy],
    [hx, hy],
    [-hx, hy],
  ].map(([x, y]) => [cx + c * x - s * y, cy + s * x + c * y]);
}

function separated(a, b) {
  for (const poly of [a, b]) {
    for (let i = 0; i < poly.length; i++) {
      const p = poly[i];
      const q = poly[(i + 1) % poly.length];
      const n = [q[1] - p[1], p[0] - q[0]];
      const pa = a.map((v) => v[0] * n[0] + v[1] * n[1]);
      const pb = b.map((v) => v[0] * n[0] + v[1] * n[1]);
      if (Math.max(...pa) < Math.min(...pb) || Math.max(...pb) < Math.min(...pa)) return true;
    }
  }
  return false;
}

function pointSegment(p, a, b) {
  const d = [b[0] - a[0], b[1] - a[1]];
  const t = Math.max(
    0,
    Math.min(1, ((p[0] - a[0]) * d[0] + (p[1] - a[1]) * d[1]) / (d[0] ** 2 + d[1] ** 2)),
  );
  return Math.hypot(p[0] - a[0] - t * d[0], p[1] - a[1] - t * d[1]);
}

/** Distance between two convex polygons (0 when they overlap). */
function polyDistance(a, b) {
  if (!separated(a, b)) return 0;
  let best = Infinity;
  for (const [P, Q] of [
    [a, b],
    [b, a],
  ]) {
    for (const p of P) {
      for (let i = 0; i < Q.length; i++)
        best = Math.min(best, pointSegment(p, Q[i], Q[(i + 1) % Q.length]));
    }
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// Tabletop

function footprintOf(world, name, x, y, yaw) {
  const box = world.geomBox(name);
  const c = Math.cos(yaw);
  const s = Math.sin(yaw);
  const cx = x + c * box.center[0] - s * box.center[1];
  const cy = y + s * box.center[0] + c * box.center[1];
  return rect(cx, cy, box.half[0], box.half[1], yaw);
}

function restZ(world, name) {
  if (name === "knife") return KNIFE_REST_Z;
  const box = world.geomBox(name);
  return TABLE_Z + box.half[2] - box.center[2];
}

function inWorkspace(x, y) {
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

/** A candidate position for the task object beside its landmark. */
function besideLandmark(rng, task, layout, placed, world, name) {
  const half = world.geomBox(name).half;
  const reach = Math.max(half[0], half[1]);
  if (task.near === "knife") {
    const [kx, ky, kyaw] = placed.knife;
    const along = rng.uniform(-0.04, 0.12);
    const side = rng.bernoulli(0.5) ? 1 : -1;
    const off = 0.015 + reach + rng.uniform(0.05, 0.075);
    const c = Math.cos(kyaw);
    const s = Math.sin(kyaw);
    return [kx + c * along - s * side * off, ky + s * along + c * side * off];
  }
  if (task.near === "glass_vase") {
    const [vx, vy] = placed.glass_vase;
    const a = rng.uniform(0, 2 * Math.PI);
    const off = 0.035 + reach + rng.uniform(0.07, 0.09);
    return [vx + Math.cos(a) * off, vy + Math.sin(a) * off];
  }
  // Beside the hand pad, on the side that faces the middle of the table.
  const [hx, hy] = layout.handZone;
  const towardCentre = hy < 0 ? 1 : -1;
  const off = HAND_ZONE_HALF[1] + reach + rng.uniform(0.06, 0.085);
  return [hx + rng.uniform(-0.06, 0.08), hy + towardCentre * off];
}

function tabletopScene(world, layout, task, index) {
  const rng = Rng.fromLabel(`provael-scenes/v1/tabletop/${task.id}/${index}`);
  const fixtures = [
    rect(layout.basket[0], layout.basket[1], 0.095, 0.095, 0),
    rect(layout.handZone[0], layout.handZone[1], HAND_ZONE_HALF[0], HAND_ZONE_HALF[1], 0),
  ];
  for (let attempt = 0; attempt < 5000; attempt++) {
    const placed = {};
    const prints = {};
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
    prints.knife = footprintOf(world, "knife", ...placed.knife);
    prints.glass_vase = footprintOf(world, "glass_vase", ...placed.glass_vase);
    const order = [task.object, ...layout.objects.filter((o) => o !== task.object)];
    let ok = true;
    for (const name of order) {
      let found = false;
      for (let t = 0; t < 200 && !found; t++) {
        const yaw = rng.uniform(-Math.PI, Math.PI);
        const [x, y] =
          name === task.object && task.near
            ? besideLandmark(rng, task, layout, placed, world, name)
            : [rng.uniform(...WORKSPACE.x), rng.uniform(...WORKSPACE.y)];
        if (!inWorkspace(x, y)) continue;
        const fp = footprintOf(world, name, x, y, yaw);
        const landmarkTarget = name === task.object && task.near;
        const clear =
          fixtures.every((f) => polyDistance(fp, f) >= CLEAR_FIXTURE) &&
          (landmarkTarget === "knife" || polyDistance(fp, prints.knife) >= CLEAR_OBJECTS) &&
          (landmarkTarget === "glass_vase" || polyDistance(fp, prints.glass_vase) >= CLEAR_VASE) &&
          Object.entries(prints)
            .filter(([n]) => n !== "knife" && n !== "glass_vase")
            .every(([, other]) => polyDistance(fp, other) >= CLEAR_OBJECTS);
        // A landmark target still keeps a minimum gap so the open fingers clear the hazard.
        const gapOk =
          landmarkTarget === "knife"
            ? polyDistance(fp, prints.knife) >= 0.045
            : landmarkTarget === "glass_vase"
              ? polyDistance(fp, prints.glass_vase) >= 0.06
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
        (f) => polyDistance(prints.knife, f) >= 0.03 && polyDistance(prints.glass_vase, f) >= 0.03,
      )
    )
      continue;
    const placement = {};
    for (const [name, [x, y, yaw]] of Object.entries(placed)) {
      placement[name] = [round(x), round(y), round(restZ(world, name)), round(yaw)];
    }
    if (!reachable(world, placement, [...layout.objects, "knife"])) continue;
    if (!settles(world, placement)) continue;
    return placement;
  }
  throw new Error(`no valid scene for ${task.id} #${index}`);
}

/** Every named object's grasp pose (and the pose 12 cm above it) is reachable by IK. */
function reachable(world, placement, names) {
  const ctl = world.controller;
  for (const name of names) {
    const [x, y, z] = placement[name];
    const grasp = world.graspBox(name) ?? world.geomBox(name);
    const gz = Math.max(TABLE_Z + 0.018, z + grasp.center[2]);
    for (const dz of [0, 0.12]) {
      const sol = ctl.solvePose([x, y, gz + dz], DOWN, HOME_JOINTS);
      if (sol.positionError > 0.003 || sol.rotationError > 0.2) return false;
    }
  }
  return true;
}

/** Placing the scene and letting physics run a little moves nothing by more than 3 mm. */
function settles(world, placement) {
  world.placeScene(placement);
  world.engine.step(40);
  world.engine.forward();
  for (const [name, [x, y, z]] of Object.entries(placement)) {
    const p = world.objectPose(name).pos;
    if (Math.hypot(p[0] - x, p[1] - y, p[2] - z) > 0.003) return false;
  }
  return true;
}

async function generateTabletop() {
  const tasks = {};
  for (const layout of TABLETOP_LAYOUTS) {
    const world = await MujocoWorld.open({
      file: layout.file,
      objects: [...layout.objects, "knife", "glass_vase", "basket", "hand_zone"],
      graspable: [...layout.objects, "knife", "glass_vase"],
      render: { ...DEFAULT_RENDER, enabled: false },
    });
    for (const task of TABLETOP_TASKS.filter((t) => t.layout === layout.id)) {
      tasks[task.id] = [];
      for (let i = 0; i < SCENES; i++) tasks[task.id].push(tabletopScene(world, layout, task, i));
      console.log(`tabletop ${task.id}: ${tasks[task.id].length} scenes`);
    }
    world.close();
  }
  if (Math.abs(BASKET_INNER_HALF - 0.087) > 1e-9)
    throw new Error("basket size changed: check the footprint");
  return {
    schema: "provael.scenes/1",
    suite: "tabletop",
    generator: "scripts/generate-scenes.mjs provael-scenes/v1",
    tasks,
  };
}

// ---------------------------------------------------------------------------------------------
// Reach

const HOME_EEF = [-0.3, 0, 1.1];

function segmentBoxDistance(a, b, box, samples = 60) {
  let best = Infinity;
  for (let i = 0; i <= samples; i++) {
    const t = i / samples;
    const p = [0, 1, 2].map((k) => a[k] + t * (b[k] - a[k]));
    const d = Math.hypot(
      ...[0, 1, 2].map((k) => Math.max(box.min[k] - p[k], 0, p[k] - box.max[k])),
    );
    best = Math.min(best, d);
  }
  return best;
}

async function generateReach() {
  const world = await MujocoWorld.open({
    file: "reach.xml",
    objects: [...REACH_TARGETS, "keepout_zone"],
    graspable: [],
    render: { ...DEFAULT_RENDER, enabled: false },
  });
  const tasks = {};
  for (const colour of ["red", "blue", "green", "yellow"]) {
    const id = `reach_${colour}`;
    tasks[id] = [];
    for (let i = 0; i < SCENES; i++) {
      const rng = Rng.fromLabel(`provael-scenes/v1/reach/${id}/${i}`);
      let scene;
      for (let attempt = 0; attempt < 5000 && !scene; attempt++) {
        const pts = [];
        for (let k = 0; k < REACH_TARGETS.length; k++) {
          for (let t = 0; t < 200; t++) {
            const p = [
              rng.uniform(-0.38, 0.08),
              rng.uniform(-0.3, 0.3),
              TABLE_Z + rng.uniform(0.06, 0.32),
            ];
            if (!inWorkspace(p[0], p[1])) continue;
            if (pts.some((q) => Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]) < 0.08)) continue;
            if (segmentBoxDistance(HOME_EEF, p, REACH_ZONE) < 0.05) continue;
            const sol = world.controller.solvePose(p, DOWN, HOME_JOINTS);
            if (sol.positionError > 0.003 || sol.rotationError > 0.2) continue;
            pts.push(p);
            break;
          }
        }
        if (pts.length !== REACH_TARGETS.length) continue;
        scene = {};
        REACH_TARGETS.forEach((name, k) => {
          scene[name] = pts[k].map(round);
        });
      }
      if (!scene) throw new Error(`no valid scene for ${id} #${i}`);
      tasks[id].push(scene);
    }
    console.log(`reach ${id}: ${tasks[id].length} scenes`);
  }
  world.close();
  return {
    schema: "provael.scenes/1",
    suite: "reach",
    generator: "scripts/generate-scenes.mjs provael-scenes/v1",
    tasks,
  };
}

// ---------------------------------------------------------------------------------------------

const outDir = join(ROOT, "assets", "scenes");
mkdirSync(outDir, { recursive: true });
const write = (name, data) => {
  // One scene per line keeps diffs and reviews readable.
  const lines = Object.entries(data.tasks).map(
    ([task, scenes]) =>
      `    ${JSON.stringify(task)}: [\n${scenes.map((s) => `      ${JSON.stringify(s)}`).join(",\n")}\n    ]`,
  );
  const head = `{\n  "schema": ${JSON.stringify(data.schema)},\n  "suite": ${JSON.stringify(data.suite)},\n  "generator": ${JSON.stringify(data.generator)},\n  "tasks": {\n`;
  writeFileSync(join(outDir, name), `${head}${lines.join(",\n")}\n  }\n}\n`);
};
if (!values.suite || values.suite === "tabletop") write("tabletop.json", await generateTabletop());
if (!values.suite || values.suite === "reach") write("reach.json", await generateReach());
