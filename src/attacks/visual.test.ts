import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { begin, fakePolicy, flatObservation } from "../../test/support/attack-context.js";
import { isRendered } from "../core/lazy-images.js";
import type { Observation, StepResult, TaskSpec } from "../core/types.js";
import { RayCamera } from "../suites/mujoco/camera.js";
import type { MujocoInstance } from "../suites/mujoco/instance.js";
import { TABLE_Z } from "../suites/mujoco/objects.js";
import { tabletopSuite } from "../suites/mujoco/tabletop.js";
import { stubSuite } from "../suites/stub.js";
import { attacks } from "./index.js";
import type { PatchRegion } from "./pixels.js";
import { appearanceOf, projectPoint } from "./scene.js";
import {
  decoyObject,
  neutralDecoy,
  PATCH_PATTERNS,
  patch,
  patternPixels,
  placeboPatch,
} from "./visual.js";

const idle = fakePolicy(() => new Float32Array(7));

function task(id: string): TaskSpec {
  const t = tabletopSuite.tasks().find((x) => x.id === id);
  if (!t) throw new Error(`no task ${id}`);
  return t;
}

/** Indices of the bytes that differ between two images. */
function changedPixels(a: Uint8Array, b: Uint8Array, channels: number): Set<number> {
  const out = new Set<number>();
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) out.add(Math.floor(i / channels));
  return out;
}

function inRegion(pixel: number, width: number, r: PatchRegion): boolean {
  const x = pixel % width;
  const y = Math.floor(pixel / width);
  return x >= r.x && x < r.x + r.size && y >= r.y && y < r.y + r.size;
}

describe("visual attacks on the tabletop cameras", () => {
  let sim: MujocoInstance;
  let first: StepResult;
  const kitchen = task("kitchen_red_block");

  beforeAll(async () => {
    sim = (await tabletopSuite.open()) as MujocoInstance;
    first = await sim.reset({ task: kitchen.id, scene: 0, seed: 0 });
  }, 30_000);
  afterAll(() => sim.close());

  it("projects scene objects onto their own pixels in the agent view and the wrist view", () => {
    const world = sim.current();
    if (!world) throw new Error("no world");
    const { mj, model, data } = world.engine;
    const geomBody = model.geom_bodyid as Int32Array;
    const state = first.obs.privileged;
    let hits = 0;
    let seen = 0;
    for (const name of ["agentview", "wrist"]) {
      const cam = new RayCamera(mj, model, { camera: name, segmentation: true });
      const seg = cam.render(data).segmentation as Int32Array;
      cam.dispose();
      const camModel = tabletopSuite.capabilities.cameraModels?.find((c) => c.name === name);
      expect(camModel, name).toBeDefined();
      for (const [obj, pose] of Object.entries(state?.objects ?? {})) {
        if (obj === "basket" || obj === "hand_zone") continue;
        const p = projectPoint(camModel!, pose.pos, 128, 128, state);
        if (!p || p.col < 0 || p.row < 0 || p.col > 127 || p.row > 127) continue;
        seen += 1;
        const g = seg[Math.round(p.row) * 128 + Math.round(p.col)] ?? -1;
        if (g >= 0 && world.engine.name("body", geomBody[g] ?? -1) === obj) hits += 1;
      }
    }
    expect(seen).toBeGreaterThanOrEqual(5);
    // A point can be hidden behind another object; nearly all must land on their own object.
    expect(hits / seen).toBeGreaterThanOrEqual(0.8);
  });

  it("patch: writes a high-contrast pattern over the hazard's projection and nowhere else", async () => {
    const { hooks } = await begin(patch, {
      suite: tabletopSuite,
      task: kitchen,
      policy: idle,
      seed: 4,
    });
    const obs = first.obs;
    const out = (await hooks.perceive?.(obs, 0)) as Observation;
    const region = hooks.budget?.().detail?.region as PatchRegion;
    expect(region.anchor).toBe("hazard");
    expect(region.size).toBe(16);
    const before = obs.images.agentview;
    const after = out.images.agentview;
    if (!before || !after) throw new Error("no agentview");
    const changed = changedPixels(before.data, after.data, 3);
    expect(changed.size).toBeGreaterThan(region.size * region.size * 0.5);
    for (const p of changed) expect(inRegion(p, 128, region)).toBe(true);
    // The suite's own buffers are never written; the wrist camera is left alone.
    expect(obs.images.agentview).toBe(before);
    expect(out.images.wrist).toBe(obs.images.wrist);
    // Centred on the hazard's projection, within the seeded quarter-side jitter.
    const cam = tabletopSuite.capabilities.cameraModels?.find((c) => c.name === "agentview");
    const p = projectPoint(cam!, kitchen.hazard.targetPos!, 128, 128);
    expect(Math.abs(region.x + region.size / 2 - (p?.col ?? 0))).toBeLessThanOrEqual(
      region.size / 4 + 1,
    );
    expect(Math.abs(region.y + region.size / 2 - (p?.row ?? 0))).toBeLessThanOrEqual(
      region.size / 4 + 1,
    );
  });

  it("placebo_patch: same cell, same region, random colours instead of the pattern", async () => {
    const opts = { suite: tabletopSuite, task: kitchen, policy: idle, seed: 4 };
    const a = await begin(patch, opts);
    const b = await begin(placeboPatch, opts);
    const pa = (await a.hooks.perceive?.(first.obs, 0)) as Observation;
    const pb = (await b.hooks.perceive?.(first.obs, 0)) as Observation;
    expect(b.hooks.budget?.().detail?.region).toEqual(a.hooks.budget?.().detail?.region);
    expect(pb.images.agentview?.data).not.toEqual(pa.images.agentview?.data);
    expect(pb.images.agentview?.data).not.toEqual(first.obs.images.agentview?.data);
  });

  it("decoy_object: adds a touchable copy of the task object beside the hazard, seen by both cameras", async () => {
    const { hooks } = await begin(decoyObject, {
      suite: tabletopSuite,
      task: kitchen,
      policy: idle,
      seed: 2,
    });
    const edits = hooks.scene?.() ?? [];
    expect(edits).toHaveLength(1);
    const edit = edits[0]!;
    const look = appearanceOf("red_block");
    expect(edit.kind).toBe("object");
    expect(edit.params).toMatchObject({ shape: look?.shape, size: look?.size, rgba: look?.rgba });
    const pos = edit.params.pos as number[];
    const h = kitchen.hazard.targetPos!;
    expect(Math.hypot((pos[0] ?? 0) - h[0], (pos[1] ?? 0) - h[1])).toBeCloseTo(0.07, 6);

    const placed = await sim.reset({ task: kitchen.id, scene: 0, seed: 0, edits });
    let r = placed;
    for (let i = 0; i < 15; i++) r = await sim.step(new Float32Array(7));
    const decoy = r.state.objects?.decoy;
    expect(decoy, "the decoy is a scene object").toBeDefined();
    // It rests on the table where it was put (physics, not a picture).
    expect(decoy!.pos[2]).toBeCloseTo(TABLE_Z + (look?.size[2] ?? 0), 2);
    expect(Math.hypot(decoy!.pos[0] - (pos[0] ?? 0), decoy!.pos[1] - (pos[1] ?? 0))).toBeLessThan(
      0.01,
    );
    // Both cameras show it: the agent view from the start, the wrist view once the gripper hovers
    // above it (compared with the same motion in the unedited scene).
    const hover = async (edited: boolean) => {
      let res = await sim.reset({
        task: kitchen.id,
        scene: 0,
        seed: 0,
        ...(edited ? { edits } : {}),
      });
      const start = res.obs.images.agentview?.data;
      const goal = [pos[0] ?? 0, pos[1] ?? 0, TABLE_Z + 0.25];
      for (let i = 0; i < 60; i++) {
        const eef = res.state.eefPos ?? [0, 0, 0];
        const a = new Float32Array(7);
        for (let k = 0; k < 3; k++)
          a[k] = Math.max(-1, Math.min(1, ((goal[k] ?? 0) - eef[k]!) / 0.015));
        a[6] = -1;
        res = await sim.step(a);
      }
      return { agent: start, wrist: res.obs.images.wrist?.data };
    };
    const withDecoy = await hover(true);
    const without = await hover(false);
    expect(withDecoy.agent, "agentview shows it").not.toEqual(without.agent);
    expect(withDecoy.wrist, "wrist shows it").not.toEqual(without.wrist);
  }, 60_000);

  it("neutral_decoy: a grey object of the decoy's shape and size at the decoy's spot", async () => {
    const opts = { suite: tabletopSuite, task: kitchen, policy: idle, seed: 2 };
    const d = (await begin(decoyObject, opts)).hooks.scene?.()[0];
    const n = (await begin(neutralDecoy, opts)).hooks.scene?.()[0];
    expect(n?.params.pos).toEqual(d?.params.pos);
    expect(n?.params.size).toEqual(d?.params.size);
    expect(n?.params.shape).toEqual(d?.params.shape);
    expect(n?.params.rgba).toEqual([0.5, 0.5, 0.5, 1]);
  });

  it("places a decoy inside the hazard's zone when the hazard is a zone", async () => {
    const byHand = task("kitchen_green_box_by_hand");
    const edit = (
      await begin(decoyObject, { suite: tabletopSuite, task: byHand, policy: idle })
    ).hooks.scene?.()[0];
    const [x = 0, y = 0] = (edit?.params.pos ?? []) as number[];
    const zone = byHand.hazard.zones[0]!;
    expect(x).toBeGreaterThanOrEqual(zone.min[0]);
    expect(x).toBeLessThanOrEqual(zone.max[0]);
    expect(y).toBeGreaterThanOrEqual(zone.min[1]);
    expect(y).toBeLessThanOrEqual(zone.max[1]);
  });

  it("patch, its placebo, sign noise, an unfitted patch: place the patch without rendering and draws it once, on first read, as an eager paste would", async () => {
    const opts = { suite: tabletopSuite, task: kitchen, policy: idle, seed: 4 };
    for (const id of ["patch", "placebo_patch", "random_sign_noise", "unfitted_patch"]) {
      const attack = attacks.get(id);
      const step = await sim.reset({ task: kitchen.id, scene: 0, seed: 0 });
      const lazy = await begin(attack, opts);
      const out = (await lazy.hooks.perceive?.(step.obs, 0)) as Observation;
      const region = lazy.hooks.budget?.().detail?.region as PatchRegion;
      expect(region.size, attack.id).toBe(16);
      // Placing it rendered nothing, in the suite's record or the arm's.
      for (const c of ["agentview", "wrist"]) {
        expect(isRendered(step.obs.images, c), c).toBe(false);
        expect(isRendered(out.images, c), c).toBe(false);
      }
      const drawn = out.images.agentview;
      expect(out.images.agentview).toBe(drawn);
      expect(isRendered(out.images, "agentview")).toBe(true);
      expect(isRendered(step.obs.images, "wrist")).toBe(false);
      // The same region and pixels as the patch pasted into a frame rendered up front.
      const eager = await begin(attack, opts);
      const plain = { ...step.obs, images: { ...step.obs.images } };
      const ref = (await eager.hooks.perceive?.(plain, 0)) as Observation;
      expect(eager.hooks.budget?.().detail?.region).toEqual(region);
      expect(Buffer.from(drawn?.data ?? [])).toEqual(Buffer.from(ref.images.agentview?.data ?? []));
      expect(drawn?.data).not.toEqual(step.obs.images.agentview?.data);
    }
  });
});

describe("patch placement without camera geometry", () => {
  it("falls back to a seeded spot inside the stub's 16x4 image", async () => {
    const stubTask = stubSuite.tasks()[0]!;
    const { hooks } = await begin(patch, {
      suite: stubSuite,
      task: stubTask,
      policy: idle,
      seed: 1,
    });
    const obs = flatObservation(16, 4);
    const out = (await hooks.perceive?.(obs, 0)) as Observation;
    const region = hooks.budget?.().detail?.region as PatchRegion;
    expect(region.anchor).toBe("seeded");
    expect(region.size).toBe(2);
    expect(region.x + region.size).toBeLessThanOrEqual(16);
    expect(region.y + region.size).toBeLessThanOrEqual(4);
    const changed = changedPixels(obs.images.agentview!.data, out.images.agentview!.data, 3);
    expect(changed.size).toBeGreaterThan(0);
    for (const p of changed) expect(inRegion(p, 16, region)).toBe(true);
  });

  it("draws every pattern with both of its colours", () => {
    for (const pattern of PATCH_PATTERNS) {
      const px = patternPixels(pattern, 16, [220, 30, 25]);
      const colours = new Set<string>();
      for (let i = 0; i < px.length; i += 3) colours.add(`${px[i]},${px[i + 1]},${px[i + 2]}`);
      expect(colours.size, pattern).toBe(2);
    }
  });
});
