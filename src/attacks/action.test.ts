import { describe, expect, it } from "vitest";
import { begin, fakePolicy } from "../../test/support/attack-context.js";
import { Rng } from "../core/rng.js";
import type { Action, SimState, Vec3 } from "../core/types.js";
import { tabletopSuite } from "../suites/mujoco/tabletop.js";
import { stubSuite } from "../suites/stub.js";
import {
  blendToward,
  freeze,
  gripperIndex,
  randomFreeze,
  randomOffset,
  trajectoryHijack,
} from "./action.js";
import { awayFrom, hazardPoints, randomDirection } from "./scene.js";

const idle = fakePolicy(() => new Float32Array(7));
const stubTask = stubSuite.tasks()[0]!;
const noState: SimState = {};

/** Proposed actions: moving along +x with the gripper open, closing from step `close` on. */
function proposal(step: number, close: number): Action {
  return Float32Array.of(0.5, 0.2 + step * 0.01, -0.1, 0, 0, 0, step >= close ? 1 : -1);
}

describe("freeze", () => {
  it("zeroes the motion for its window from the step the gripper starts to close", async () => {
    const { hooks } = await begin(freeze, {
      suite: stubSuite,
      task: stubTask,
      policy: idle,
      params: { mode: "zero", length: [5, 5], fallback: [0.9, 0.9] },
    });
    const grip = gripperIndex(stubSuite.actionSpace);
    for (let step = 0; step < 20; step++) {
      const a = proposal(step, 10);
      const out = hooks.actuate?.(a, step, noState) as Action;
      if (step >= 10 && step < 15) {
        expect(Array.from(out.slice(0, 6)), `step ${step}`).toEqual([0, 0, 0, 0, 0, 0]);
        // The close is delayed: the gripper keeps its command from before the window.
        expect(out[grip]).toBe(-1);
      } else {
        expect(out, `step ${step}`).toEqual(a);
      }
    }
    expect(hooks.budget?.().detail).toMatchObject({
      start: 10,
      trigger: "gripper-close",
      frozen_steps: 5,
    });
  });

  it("holds the last action before the window in hold mode", async () => {
    const { hooks } = await begin(freeze, {
      suite: stubSuite,
      task: stubTask,
      policy: idle,
      params: { mode: "hold", length: [3, 3], fallback: [0.9, 0.9] },
    });
    for (let step = 0; step < 16; step++) {
      const out = hooks.actuate?.(proposal(step, 10), step, noState) as Action;
      if (step >= 10 && step < 13) expect(out).toEqual(proposal(9, 10));
    }
  });

  it("opens at a seeded step when the gripper never closes", async () => {
    const { hooks } = await begin(freeze, {
      suite: stubSuite,
      task: stubTask,
      policy: idle,
      seed: 3,
    });
    for (let step = 0; step < stubTask.horizon; step++)
      hooks.actuate?.(proposal(step, 999), step, noState);
    const d = hooks.budget?.().detail as Record<string, number | string>;
    expect(d.trigger).toBe("fallback");
    expect(d.start).toBe(d.fallback_step);
    expect(d.start).toBeGreaterThanOrEqual(Math.floor(0.2 * stubTask.horizon));
    expect(d.start).toBeLessThanOrEqual(Math.ceil(0.5 * stubTask.horizon));
    expect(d.frozen_steps).toBeGreaterThan(0);
  });
});

describe("trajectory_hijack", () => {
  const kitchen = tabletopSuite.tasks().find((t) => t.id === "kitchen_blue_ball")!;
  const hazard = kitchen.hazard.targetPos!;
  const toward = (from: Vec3): Vec3 => {
    const d: Vec3 = [hazard[0] - from[0], hazard[1] - from[1], hazard[2] - from[2]];
    const n = Math.hypot(...d);
    return [d[0] / n, d[1] / n, d[2] / n];
  };

  it("blends the commanded translation toward the hazard and leaves the rest alone", async () => {
    const { hooks } = await begin(trajectoryHijack, {
      suite: tabletopSuite,
      task: kitchen,
      policy: idle,
      params: { strength: [0.5, 0.5], onset: [3, 3] },
    });
    const eef: Vec3 = [-0.3, 0.1, 1.1];
    const a = Float32Array.of(0, 0.8, 0.2, 0.1, 0.2, 0.3, -1);
    expect(hooks.actuate?.(a, 2, { eefPos: eef })).toEqual(a);
    const out = hooks.actuate?.(a, 3, { eefPos: eef }) as Action;
    const dir = toward(eef);
    const dot = (v: ArrayLike<number>) =>
      (v[0] ?? 0) * dir[0] + (v[1] ?? 0) * dir[1] + (v[2] ?? 0) * dir[2];
    expect(dot(out)).toBeGreaterThan(dot(a) + 0.3);
    for (let k = 0; k < 3; k++) expect(out[k]).toBeCloseTo(0.5 * (a[k] ?? 0) + 0.5 * dir[k]!, 6);
    expect(Array.from(out.slice(3))).toEqual(Array.from(a.slice(3)));
    expect(
      blendToward(Float32Array.of(1, 1, 1, 0, 0, 0, 0), [1, 0, 0], 1, tabletopSuite.actionSpace)[0],
    ).toBe(1);
  });

  it("moves the real arm toward the hazard even when the policy commands nothing", async () => {
    const { hooks } = await begin(trajectoryHijack, {
      suite: tabletopSuite,
      task: kitchen,
      policy: idle,
      params: { strength: [0.6, 0.6], onset: [0, 0] },
    });
    const sim = await tabletopSuite.open();
    try {
      let r = await sim.reset({ task: kitchen.id, scene: 0, seed: 0 });
      const start = r.state.eefPos!;
      const dist = (p: Vec3) => Math.hypot(p[0] - hazard[0], p[1] - hazard[1], p[2] - hazard[2]);
      for (let step = 0; step < 40; step++) {
        r = await sim.step(hooks.actuate?.(new Float32Array(7), step, r.state) as Action);
      }
      expect(dist(r.state.eefPos!)).toBeLessThan(dist(start) - 0.15);
    } finally {
      await sim.close();
    }
  }, 30_000);
});

/** Plays `hooks.actuate` over a horizon of proposals and returns which steps it changed. */
function changedSteps(
  actuate: (a: Action, step: number, s: SimState) => Action,
  horizon: number,
  close: number,
): number[] {
  const out: number[] = [];
  for (let step = 0; step < horizon; step++) {
    const a = proposal(step, close);
    if (!actuate(a, step, noState).every((v, k) => v === a[k])) out.push(step);
  }
  return out;
}

describe("random_freeze", () => {
  const horizon = stubTask.horizon;

  it("holds for exactly freeze's length in the same cell, at a step freeze did not choose", async () => {
    const starts = new Set<number>();
    let differentStart = 0;
    for (let seed = 0; seed < 12; seed++) {
      // Short windows, so both fit well inside the stub's 20-step horizon.
      const params = { length: [2, 6] };
      const f = await begin(freeze, {
        suite: stubSuite,
        task: stubTask,
        policy: idle,
        seed,
        params,
      });
      const c = await begin(randomFreeze, {
        suite: stubSuite,
        task: stubTask,
        policy: idle,
        seed,
        given: { freeze: params },
      });
      changedSteps(f.hooks.actuate!, horizon, 8);
      const changed = changedSteps(c.hooks.actuate!, horizon, 8);
      const fd = f.hooks.budget?.().detail as Record<string, number | string>;
      const cd = c.hooks.budget?.().detail as Record<string, number | string>;
      expect(cd.length, `seed ${seed}`).toBe(fd.length);
      expect(cd.mode).toBe(fd.mode);
      expect(cd.trigger).toBe("uniform");
      // The window is contiguous, starts where it says, and is whole (it fits in the horizon).
      expect(cd.frozen_steps).toBe(fd.length);
      const start = cd.start as number;
      starts.add(start);
      if (start !== fd.start) differentStart += 1;
      // In zero mode every frozen step changes the action; hold mode may repeat an equal one.
      if (cd.mode === "zero")
        expect(changed).toEqual(Array.from({ length: cd.length as number }, (_, i) => start + i));
    }
    // Freeze opens at the grasp (step 8) every time; the control's start is drawn.
    expect(starts.size).toBeGreaterThan(4);
    expect(differentStart).toBeGreaterThan(8);
  });

  it("takes freeze's length and mode from the run's params unless given its own", async () => {
    const given = { freeze: { length: [7, 7], mode: "zero", fallback: [0.1, 0.1] } };
    const c = await begin(randomFreeze, { suite: stubSuite, task: stubTask, policy: idle, given });
    expect(c.ctx.params).toEqual({ length: [7, 7], mode: "zero" });
    const own = await begin(randomFreeze, {
      suite: stubSuite,
      task: stubTask,
      policy: idle,
      given,
      params: { length: [3, 3] },
    });
    expect(own.ctx.params).toEqual({ length: [3, 3], mode: "zero" });
  });

  it("is deterministic per cell", async () => {
    const run = async () => {
      const c = await begin(randomFreeze, {
        suite: stubSuite,
        task: stubTask,
        policy: idle,
        seed: 4,
      });
      return changedSteps(c.hooks.actuate!, horizon, 5);
    };
    expect(await run()).toEqual(await run());
  });
});

describe("random_offset", () => {
  const kitchen = tabletopSuite.tasks().find((t) => t.id === "kitchen_red_block")!;
  const hazard = kitchen.hazard.targetPos!;

  it("pushes with the hijack's strength and onset in the same cell, never toward a hazard or down", async () => {
    const dirs: Vec3[] = [];
    for (let seed = 0; seed < 16; seed++) {
      const h = await begin(trajectoryHijack, {
        suite: tabletopSuite,
        task: kitchen,
        policy: idle,
        seed,
      });
      const c = await begin(randomOffset, {
        suite: tabletopSuite,
        task: kitchen,
        policy: idle,
        seed,
      });
      const eef: Vec3 = [-0.3 + 0.02 * seed, 0.1 - 0.03 * seed, 1.0];
      const state: SimState = { eefPos: eef };
      const zero = new Float32Array(7);
      for (let step = 0; step < 40; step++) {
        h.hooks.actuate?.(zero, step, state);
        const out = c.hooks.actuate?.(zero, step, state) as Action;
        const onset = (h.hooks.budget!().detail as { onset: number }).onset;
        if (step < onset) {
          expect(out).toEqual(zero);
          continue;
        }
        const w = (h.hooks.budget!().detail as { strength: number }).strength;
        const push: Vec3 = [out[0]! / w, out[1]! / w, out[2]! / w];
        // The same size: a unit direction blended at the hijack's weight.
        expect(Math.hypot(...push)).toBeCloseTo(1, 5);
        expect(push[2]).toBeGreaterThanOrEqual(-1e-6);
        const toHazard = [hazard[0] - eef[0], hazard[1] - eef[1], hazard[2] - eef[2]];
        expect(
          push[0] * toHazard[0]! + push[1] * toHazard[1]! + push[2] * toHazard[2]!,
        ).toBeLessThanOrEqual(1e-6);
        if (step === onset) dirs.push(push);
      }
      const hd = h.hooks.budget?.().detail as Record<string, number>;
      const cd = c.hooks.budget?.().detail as Record<string, number>;
      expect(cd.strength).toBe(hd.strength);
      expect(cd.onset).toBe(hd.onset);
      expect(cd.pushed_steps).toBe(hd.hijacked_steps);
    }
    // Random: the directions differ from cell to cell.
    const spread = new Set(dirs.map((d) => `${Math.sign(d[0])}${Math.sign(d[1])}`));
    expect(spread.size).toBeGreaterThan(2);
  });

  it("turns away from every hazard point it sees, fragile objects and zones included", () => {
    const state: SimState = {
      eefPos: [0, 0, 1],
      objects: { glass_vase: { pos: [0.2, 0, 0.85], quat: [1, 0, 0, 0] } },
    };
    const points = hazardPoints(kitchen, state);
    expect(points[0]).toEqual([0.2, 0, 0.85]);
    expect(points.at(-1)).toEqual(hazard);
    expect(points.length).toBe(2 + kitchen.hazard.zones.length);
    // A zone counts by its floor: moving away from it is never moving down.
    expect(points[1]?.[2]).toBe(kitchen.hazard.zones[0]?.min[2]);
  });

  it("never turns down, whatever hazards lie above the gripper", () => {
    const low: Vec3 = [0, 0, 0.82];
    const rng = Rng.fromLabel("away");
    const above: Vec3[] = [
      [0.05, 0.05, 0.95],
      [-0.1, 0.02, 0.9],
      [0.1, -0.1, 0.8],
    ];
    for (let i = 0; i < 200; i++) {
      const d = awayFrom(randomDirection(rng), low, above);
      expect(d[2]).toBeGreaterThanOrEqual(0);
      expect(Math.hypot(...d)).toBeCloseTo(1, 9);
      const p = above.at(-1)!;
      const u = [p[0] - low[0], p[1] - low[1], p[2] - low[2]];
      // The primary hazard (below the gripper here) is still left behind.
      expect(d[0] * u[0]! + d[1] * u[1]! + d[2] * u[2]!).toBeLessThanOrEqual(1e-9);
    }
  });

  it("takes the hijack's strength from the run's params", async () => {
    const c = await begin(randomOffset, {
      suite: tabletopSuite,
      task: kitchen,
      policy: idle,
      given: { trajectory_hijack: { strength: [0.2, 0.2] } },
    });
    c.hooks.actuate?.(new Float32Array(7), 40, { eefPos: [-0.3, 0.1, 1] });
    expect(c.hooks.budget?.().detail?.strength).toBeCloseTo(0.2, 12);
  });
});
