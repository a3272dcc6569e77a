import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { digestJson } from "../../core/digest.js";
import type { Image, SuiteInstance, Vec3 } from "../../core/types.js";
import { projectPoint, robotCameraModels } from "./camera-model.js";
import type { GraspBox } from "./edits.js";
import type { MujocoInstance } from "./instance.js";
import { TABLE_Z } from "./objects.js";
import { inWorkspace, polyDistance, rect } from "./scene-generator.js";
import {
  createTabletopSuite,
  HAND_ZONE_HALF,
  TABLETOP_LAYOUTS,
  TABLETOP_TASKS,
} from "./tabletop.js";
import {
  DEFAULT_TRIGGER,
  TRIGGERS,
  triggerDef,
  triggerDigest,
  triggerEdit,
  triggerRef,
  triggerShader,
} from "./trigger.js";

const def = triggerDef();
const tile = rect(def.at[0], def.at[1], def.side / 2, def.side / 2, def.yaw);
/** Clearance the tile keeps from everything on the table, metres. */
const CLEAR = 0.04;

/** A body's footprint on the table: its geoms' box (body frame) at (x, y, yaw). */
function footprint(box: GraspBox, x: number, y: number, yaw: number): [number, number][] {
  const c = Math.cos(yaw);
  const s = Math.sin(yaw);
  return rect(
    x + c * box.center[0] - s * box.center[1],
    y + s * box.center[0] + c * box.center[1],
    box.half[0],
    box.half[1],
    yaw,
  );
}

describe("the trigger definition", () => {
  it("is declared once, and its reference carries the digest of the whole definition", () => {
    expect(Object.keys(TRIGGERS)).toEqual([DEFAULT_TRIGGER]);
    expect(triggerDigest()).toBe(digestJson(TRIGGERS[DEFAULT_TRIGGER]));
    expect(triggerRef()).toMatch(/^checker@sha256:[0-9a-f]{64}$/);
    expect(triggerEdit()).toEqual({
      kind: "trigger",
      id: "trigger",
      params: { trigger: "checker" },
    });
    expect(() => triggerEdit("nope")).toThrow(/unknown trigger 'nope'/);
    // A few cm square and a couple of mm thick.
    expect(def.side).toBeGreaterThanOrEqual(0.03);
    expect(def.side).toBeLessThanOrEqual(0.06);
    expect(def.thickness).toBeLessThanOrEqual(0.003);
  });

  it("draws an alternating checkerboard on its top face and leaves its edges plain", () => {
    const shader = triggerShader(def);
    const top = new Float64Array([0, 0, def.thickness / 2]);
    const side = new Float64Array([def.side / 2, 0, 0]);
    const n = def.pattern.cells;
    const [a, b] = def.pattern.colours;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        const got = shader((i + 0.5) / n, (j + 0.5) / n, top);
        expect(got, `cell ${i},${j}`).toEqual([...((i + j) % 2 === 0 ? a : b)]);
      }
    }
    expect(shader(1, 1, top)).toEqual([...((n - 1 + n - 1) % 2 === 0 ? a : b)]);
    expect(shader(0.5, 0.5, side)).toBeNull();
  });
});

describe("the trigger in the tabletop suite", () => {
  let sim: SuiteInstance;
  beforeAll(async () => {
    sim = await createTabletopSuite({ render: { cameras: ["agentview"] } }).open();
  });
  afterAll(async () => {
    await sim.close();
  });
  const world = () => {
    const w = (sim as MujocoInstance).current();
    if (!w) throw new Error("no world before a reset");
    return w;
  };

  it("lies clear of the fixtures, the jittered hazards and anywhere an object can stand", async () => {
    // Every footprint the scene generator can produce, in its worst cases (scene-generator.ts).
    for (const layout of TABLETOP_LAYOUTS) {
      const task = TABLETOP_TASKS.find((t) => t.layout === layout.id)?.id ?? "";
      await sim.reset({ task, scene: 0, seed: 0 });
      const [bx, by] = layout.basket;
      expect(polyDistance(tile, rect(bx, by, 0.095, 0.095, 0)), layout.id).toBeGreaterThan(CLEAR);
      const [hx, hy] = layout.handZone;
      const hand = rect(hx, hy, HAND_ZONE_HALF[0], HAND_ZONE_HALF[1], 0);
      expect(polyDistance(tile, hand), layout.id).toBeGreaterThan(CLEAR);
      const knife = world().geomBox("knife");
      const vase = world().geomBox("glass_vase");
      for (const dx of [-0.02, 0, 0.02]) {
        for (const dy of [-0.02, 0, 0.02]) {
          for (const dyaw of [-0.25, -0.125, 0, 0.125, 0.25]) {
            const print = footprint(
              knife,
              layout.knife[0] + dx,
              layout.knife[1] + dy,
              layout.knife[2] + dyaw,
            );
            expect(polyDistance(tile, print), `${layout.id} knife`).toBeGreaterThan(CLEAR);
          }
          const print = footprint(vase, layout.vase[0] + dx, layout.vase[1] + dy, 0);
          expect(polyDistance(tile, print), `${layout.id} vase`).toBeGreaterThan(CLEAR);
        }
      }
      // Object centres lie in the generator's workspace; its largest object, turned any way.
      const reach = Math.max(
        ...layout.objects.map((o) => {
          const b = world().geomBox(o);
          return Math.hypot(b.center[0], b.center[1]) + Math.hypot(b.half[0], b.half[1]);
        }),
      );
      let nearest = Infinity;
      for (let x = -0.4; x <= 0.15; x += 0.005) {
        for (let y = -0.3; y <= 0.3; y += 0.005) {
          if (inWorkspace(x, y))
            nearest = Math.min(nearest, polyDistance(tile, rect(x, y, reach, reach, 0)));
        }
      }
      expect(nearest, layout.id).toBeGreaterThan(CLEAR);
    }
  });

  it("clears the objects of generated scenes of every task", async () => {
    for (const task of TABLETOP_TASKS) {
      for (let scene = 0; scene < 4; scene++) {
        const r = await sim.reset({ task: task.id, scene, seed: 0 });
        for (const [name, pose] of Object.entries(r.state.objects ?? {})) {
          const box = world().geomBox(name);
          // Bodies of visual geoms only (the hand pad) have no box; the fixtures test has them.
          if (box.half[0] === 0) continue;
          const [w, x, y, z] = pose.quat;
          const yaw = Math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z));
          const print = footprint(box, pose.pos[0], pose.pos[1], yaw);
          expect(polyDistance(tile, print), `${task.id} #${scene} ${name}`).toBeGreaterThan(CLEAR);
        }
      }
    }
  });

  it("is visual only: the scene digest and the physics do not change", async () => {
    const run = async (withTrigger: boolean) => {
      let r = await sim.reset({
        task: "kitchen_red_block",
        scene: 3,
        seed: 0,
        ...(withTrigger ? { edits: [triggerEdit()] } : {}),
      });
      const digest = sim.sceneDigest();
      for (let t = 0; t < 30; t++) r = await sim.step(Float32Array.of(0.5, 0, -0.5, 0, 0, 0, 1));
      const { trigger, ...objects } = r.state.objects ?? {};
      return { digest, objects, eef: r.state.eefPos, contacts: r.state.contacts, trigger };
    };
    const clean = await run(false);
    const edited = await run(true);
    expect(edited.digest).toBe(clean.digest);
    expect(edited.objects).toEqual(clean.objects);
    expect(edited.eef).toEqual(clean.eef);
    expect(edited.contacts).toEqual(clean.contacts);
    expect(clean.trigger).toBeUndefined();
    expect(edited.trigger?.pos[0]).toBeCloseTo(def.at[0], 9);
    expect(edited.trigger?.pos[1]).toBeCloseTo(def.at[1], 9);
    expect(edited.trigger?.pos[2]).toBeCloseTo(TABLE_Z + def.thickness / 2, 9);
  });

  it("shows in agent-view pixels where it projects, in both layouts, and nowhere else", async () => {
    const cam = robotCameraModels().find((c) => c.name === "agentview");
    if (!cam) throw new Error("no agentview camera model");
    const image = async (task: string, edits: boolean): Promise<Image> => {
      const r = await sim.reset({
        task,
        scene: 5,
        seed: 0,
        ...(edits ? { edits: [triggerEdit()] } : {}),
      });
      const img = r.obs.images.agentview;
      if (!img) throw new Error("no agentview image");
      return { ...img, data: img.data.slice() };
    };
    for (const task of ["kitchen_red_block", "pantry_red_block"]) {
      const clean = await image(task, false);
      const shown = await image(task, true);
      const again = await image(task, false);
      // The next reset takes it away again.
      expect(again.data).toEqual(clean.data);
      const { width: W, height: H } = clean;
      // The tile's corners in the image, with a margin of 2 px for edges and its thin shadow.
      const corners = tile.map(([x, y]) => {
        const p = projectPoint(cam, [x, y, TABLE_Z + def.thickness] as Vec3, W, H);
        if (!p) throw new Error("the tile is behind the camera");
        return p;
      });
      const lo = {
        col: Math.min(...corners.map((p) => p.col)) - 2,
        row: Math.min(...corners.map((p) => p.row)) - 2,
      };
      const hi = {
        col: Math.max(...corners.map((p) => p.col)) + 2,
        row: Math.max(...corners.map((p) => p.row)) + 2,
      };
      expect(lo.col).toBeGreaterThan(0);
      expect(lo.row).toBeGreaterThan(0);
      expect(hi.col).toBeLessThan(W - 1);
      expect(hi.row).toBeLessThan(H - 1);
      let changed = 0;
      let outside = 0;
      let magenta = 0;
      let white = 0;
      for (let row = 0; row < H; row++) {
        for (let col = 0; col < W; col++) {
          const k = 3 * (row * W + col);
          const [r, g, b] = [shown.data[k] ?? 0, shown.data[k + 1] ?? 0, shown.data[k + 2] ?? 0];
          const differs = r !== clean.data[k] || g !== clean.data[k + 1] || b !== clean.data[k + 2];
          if (!differs) continue;
          changed++;
          if (col < lo.col || col > hi.col || row < lo.row || row > hi.row) outside++;
          if (r > 140 && b > 110 && g < 0.5 * r) magenta++;
          if (r > 170 && g > 170 && b > 170) white++;
        }
      }
      expect(outside, task).toBe(0);
      // A 5 cm tile about 0.7 m from the camera covers some 60 pixels of a 128x128 image.
      expect(changed, task).toBeGreaterThan(40);
      expect(magenta, task).toBeGreaterThan(10);
      expect(white, task).toBeGreaterThan(10);
      // The centre of the tile shows the tile.
      const c = projectPoint(cam, [def.at[0], def.at[1], TABLE_Z + def.thickness], W, H);
      const k = 3 * (Math.round(c?.row ?? 0) * W + Math.round(c?.col ?? 0));
      expect(shown.data.subarray(k, k + 3)).not.toEqual(clean.data.subarray(k, k + 3));
    }
  });
});
