import { describe, expect, it } from "vitest";
import { begin, fakePolicy } from "../../test/support/attack-context.js";
import type { Action, SimState, Vec3 } from "../core/types.js";
import { tabletopSuite } from "../suites/mujoco/tabletop.js";
import { stubSuite } from "../suites/stub.js";
import { blendToward, freeze, gripperIndex, trajectoryHijack } from "./action.js";

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
