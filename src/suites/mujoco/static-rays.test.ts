import { describe, expect, it } from "vitest";
import { scriptedPolicy } from "../../policies/scripted.js";
import { RayCamera } from "./camera.js";
import { BOX, NearRays } from "./near-rays.js";
import { createTabletopSuite } from "./tabletop.js";

/** Exact slab test: does the half-line o + t·v (t ≥ 0) meet the oriented box? */
function meetsBox(o: number[], v: number[], box: Float64Array, at: number): boolean {
  let t0 = 0;
  let t1 = Number.POSITIVE_INFINITY;
  for (let c = 0; c < 3; c++) {
    const ax = [box[at + 3 + 3 * c]!, box[at + 4 + 3 * c]!, box[at + 5 + 3 * c]!];
    const half = Math.hypot(ax[0]!, ax[1]!, ax[2]!);
    const u = ax.map((x) => x / half);
    const p =
      u[0]! * (box[at]! - o[0]!) + u[1]! * (box[at + 1]! - o[1]!) + u[2]! * (box[at + 2]! - o[2]!);
    const d = u[0]! * v[0]! + u[1]! * v[1]! + u[2]! * v[2]!;
    if (Math.abs(d) < 1e-12) {
      if (Math.abs(p) > half) return false;
      continue;
    }
    const a = (p - half) / d;
    const b = (p + half) / d;
    t0 = Math.max(t0, Math.min(a, b));
    t1 = Math.min(t1, Math.max(a, b));
    if (t0 > t1) return false;
  }
  return true;
}

const bytes = (a: ArrayBufferView | undefined) =>
  a ? new Uint8Array(a.buffer, a.byteOffset, a.byteLength) : new Uint8Array(0);

describe("NearRays", () => {
  it("keeps every ray that meets a box, and drops most that do not", () => {
    // A seeded LCG: the cases are the same on every run.
    let s = 12345;
    const rand = () => {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      return s / 2 ** 32;
    };
    const near = new NearRays(4096);
    const keep = new Uint8Array(4096);
    let dropped = 0;
    let total = 0;
    for (let trial = 0; trial < 20; trial++) {
      const origin = new Float64Array([rand() - 0.5, rand() - 0.5, 1.5 + rand()]);
      const n = 4096;
      const vec = new Float64Array(3 * n);
      for (let k = 0; k < n; k++) {
        const x = (rand() - 0.5) * 1.2;
        const y = (rand() - 0.5) * 1.2;
        const l = Math.hypot(x, y, 1);
        vec.set([x / l, y / l, -1 / l], 3 * k);
      }
      const count = 6;
      const boxes = new Float64Array(BOX * count);
      for (let j = 0; j < count; j++) {
        const q = [rand() - 0.5, rand() - 0.5, rand() - 0.5, rand() - 0.5];
        const ql = Math.hypot(...q);
        const [w, x, y, z] = q.map((c) => c / ql) as [number, number, number, number];
        const R = [
          [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
          [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
          [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ];
        boxes.set([rand() - 0.5, rand() - 0.5, rand() * 0.5], BOX * j);
        for (let c = 0; c < 3; c++) {
          const h = 0.01 + rand() * 0.1;
          for (let i = 0; i < 3; i++) boxes[BOX * j + 3 + 3 * c + i] = R[i]![c]! * h;
        }
      }
      near.mark(origin, vec, n, boxes, count, keep);
      for (let k = 0; k < n; k++) {
        const v = [vec[3 * k]!, vec[3 * k + 1]!, vec[3 * k + 2]!];
        const hits = Array.from({ length: count }, (_, j) =>
          meetsBox([...origin], v, boxes, BOX * j),
        ).some(Boolean);
        if (hits) expect(keep[k]).toBe(1);
        if (keep[k] === 0) dropped++;
        total++;
      }
    }
    expect(dropped / total).toBeGreaterThan(0.5);
  });

  it("lets a ray through its own box, and keeps it where another box is stamped too", () => {
    const near = new NearRays(3);
    const keep = new Uint8Array(3);
    // Two boxes side by side below the origin; the three rays point at box 7, box 9, and between.
    const boxes = new Float64Array([
      -0.5, 0, 0, 0.2, 0, 0, 0, 0.2, 0, 0, 0, 0.2, 0.5, 0, 0, 0.2, 0, 0, 0, 0.2, 0, 0, 0, 0.2,
    ]);
    const dir = (x: number) => {
      const l = Math.hypot(x, 2);
      return [x / l, 0, -2 / l];
    };
    const vec = new Float64Array([...dir(-0.5), ...dir(0.5), ...dir(0)]);
    const origin = new Float64Array([0, 0, 2]);
    const ids = new Int32Array([7, 9]);
    near.markExcept(origin, vec, 3, boxes, ids, 2, new Int32Array([7, 7, -2]), keep);
    expect(Array.from(keep.slice(0, 2))).toEqual([0, 1]);
  });

  it("keeps every ray when a box reaches across the origin's plane", () => {
    const near = new NearRays(2);
    const keep = new Uint8Array(2);
    const boxes = new Float64Array([0, 0, 0, 0.1, 0, 0, 0, 0.1, 0, 0, 0, 0.1]);
    const vec = new Float64Array([0, 0, -1, 0.1, 0, -0.995]);
    expect(near.mark(new Float64Array([0, 0, 0.05]), vec, 2, boxes, 1, keep)).toBe(2);
  });
});

describe("camera shortcuts (static hits of a still camera, unblockable shadow rays)", () => {
  it("render the same bytes, depth and segmentation as full casts, frame after frame", async () => {
    const suite = createTabletopSuite({ render: { enabled: false } });
    const sim = await suite.open();
    const expert = await scriptedPolicy.load({});
    const task = "kitchen_red_block_by_knife";
    try {
      expert.reset({ task, seed: 0, policySeed: 0 });
      let r = await sim.reset({ task, scene: 0, seed: 0 });
      const { engine } = (
        sim as unknown as { current(): { engine: { mj: never; model: never; data: never } } }
      ).current();
      const pair = (camera: string) =>
        [true, false].map(
          (shortcuts) =>
            new RayCamera(engine.mj, engine.model, {
              camera,
              shadows: true,
              depth: true,
              segmentation: true,
              shortcuts,
            }),
        ) as [RayCamera, RayCamera];
      const cams = [pair("agentview"), pair("wrist")];
      let frames = 0;
      // The expert reaches and grasps within these steps: the arm moves, the wrist camera with it.
      for (let step = 0; step < 100; step++) {
        if (step % 10 === 0 || (step > 60 && step < 64)) {
          for (const [cached, plain] of cams) {
            const a = cached.render(engine.data);
            const b = plain.render(engine.data);
            expect(Buffer.compare(a.rgb.data, b.rgb.data)).toBe(0);
            expect(Buffer.compare(bytes(a.depth), bytes(b.depth))).toBe(0);
            expect(Buffer.compare(bytes(a.segmentation), bytes(b.segmentation))).toBe(0);
            frames++;
          }
        }
        r = await sim.step(await expert.act(r.obs));
      }
      expect(frames).toBeGreaterThan(25);
      for (const pairOf of cams) for (const c of pairOf) c.dispose();
    } finally {
      await sim.close();
    }
  });

  it("keep a link's shadow on itself when the wrist camera sees it from inside", async () => {
    // An arm pose a bit-flipped tiny-vla reached (kitchen_red_block_by_knife, scene 4, step 152):
    // the wrist camera lies inside link3's capsule, whose inner surface it sees lit from the
    // inside, and the light's ray meets the capsule's outer surface first. Skipping that shadow
    // ray as "a convex geom cannot shade its own lit point" lit 3,661 pixels a full cast leaves
    // dark, which changed the policy's next action.
    const sim = await createTabletopSuite({ render: { enabled: false } }).open();
    try {
      await sim.reset({ task: "kitchen_red_block_by_knife", scene: 4, seed: 4 });
      const { engine } = (
        sim as unknown as {
          current(): { engine: { mj: MjLike; model: never; data: { qpos: Float64Array } } };
        }
      ).current();
      const arm = [
        1.3851860787940617, 0.8340208726709305, 1.0014410378354954, -0.4920048237252003,
        2.1448391950078993, 2.8945265122738317, -0.002447309999355399, -0.0012016624237878857,
      ];
      engine.data.qpos.set(arm, 0);
      engine.mj.mj_forward(engine.model, engine.data as never);
      const [cut, full] = [true, false].map(
        (shortcuts) =>
          new RayCamera(engine.mj as never, engine.model, {
            camera: "wrist",
            shadows: true,
            shortcuts,
          }),
      ) as [RayCamera, RayCamera];
      const a = cut.render(engine.data as never);
      const b = full.render(engine.data as never);
      expect(Buffer.compare(a.rgb.data, b.rgb.data)).toBe(0);
      // The case is there: pixels whose surface the camera ray met from inside.
      const inside = (full as unknown as { inside?: Uint8Array }).inside;
      expect(inside?.some((v) => v === 1)).toBe(true);
      cut.dispose();
      full.dispose();
    } finally {
      await sim.close();
    }
  });
});

interface MjLike {
  mj_forward(model: never, data: never): void;
}
