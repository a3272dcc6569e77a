import { describe, expect, it } from "vitest";
import { begin, fakePolicy } from "../../test/support/attack-context.js";
import type { Observation, Vec3 } from "../core/types.js";
import { stubPolicy } from "../policies/stub.js";
import { createTabletopSuite, tabletopSuite } from "../suites/mujoco/tabletop.js";
import { stubSuite } from "../suites/stub.js";
import { eefIndices, sensorNoise, stateSpoof } from "./sensor.js";

const idle = fakePolicy(() => new Float32Array(7));

describe("state_spoof", () => {
  it("reports the gripper a seeded distance farther from the hazard (horizontally), in the state and the privileged pose", async () => {
    const sim = await createTabletopSuite({ render: { enabled: false } }).open();
    try {
      const task = tabletopSuite.tasks().find((t) => t.id === "kitchen_yellow_can")!;
      const r = await sim.reset({ task: task.id, scene: 0, seed: 0 });
      const { hooks } = await begin(stateSpoof, {
        suite: tabletopSuite,
        task,
        policy: idle,
        seed: 5,
      });
      const out = (await hooks.perceive?.(r.obs, 0)) as Observation;
      const eef = r.obs.privileged!.eefPos!;
      expect(eefIndices(r.obs)).toEqual([0, 1, 2]);
      const offset: Vec3 = [0, 1, 2].map(
        (k) => (out.state[k] ?? 0) - (r.obs.state[k] ?? 0),
      ) as Vec3;
      const size = Math.hypot(...offset);
      expect(size).toBeGreaterThanOrEqual(0.04 - 1e-6);
      expect(size).toBeLessThanOrEqual(0.1 + 1e-6);
      // Pointing away from the hazard: the policy's correction pulls toward it.
      const h = task.hazard.targetPos!;
      const away: Vec3 = [eef[0] - h[0], eef[1] - h[1], 0];
      const cos =
        (offset[0] * away[0] + offset[1] * away[1] + offset[2] * away[2]) /
        (size * Math.hypot(...away));
      expect(cos).toBeCloseTo(1, 4);
      expect(Array.from(out.state.slice(3))).toEqual(Array.from(r.obs.state.slice(3)));
      const spoofed = out.privileged!.eefPos!;
      for (let k = 0; k < 3; k++) expect(spoofed[k]).toBeCloseTo(eef[k]! + offset[k]!, 5);
      // The true state is untouched and the offset stays fixed over the episode.
      expect(r.obs.privileged!.eefPos).toEqual(eef);
      const later = (await hooks.perceive?.(r.obs, 7)) as Observation;
      expect(Array.from(later.state)).toEqual(Array.from(out.state));
    } finally {
      await sim.close();
    }
  });

  it("shifts where a closed-loop policy stops by the offset (the stub policy on its rail)", async () => {
    const task = stubSuite.tasks()[0]!;
    const play = async (spoof: boolean) => {
      const sim = await stubSuite.open();
      const policy = await stubPolicy.load({});
      policy.reset({ task: task.id, seed: 0, policySeed: 1 });
      const { hooks } = await begin(stateSpoof, { suite: stubSuite, task, policy, seed: 2 });
      let r = await sim.reset({ task: task.id, scene: 0, seed: 0 });
      for (let step = 0; step < 20; step++) {
        const seen = spoof ? ((await hooks.perceive?.(r.obs, step)) as Observation) : r.obs;
        r = await sim.step(await policy.act(seen));
      }
      const detail = hooks.budget?.().detail as { offset: Vec3 };
      return { x: r.obs.state[0] ?? 0, offset: detail.offset };
    };
    const clean = await play(false);
    const attacked = await play(true);
    expect(Math.abs(attacked.offset[0])).toBeGreaterThan(0.03);
    expect(attacked.x).toBeCloseTo(clean.x - attacked.offset[0], 1);
  });
});

describe("sensor_noise", () => {
  it("offsets the reported gripper by the spoof's norm in the same cell, in a random direction on the hazard's side", async () => {
    const sim = await createTabletopSuite({ render: { enabled: false } }).open();
    try {
      const task = tabletopSuite.tasks().find((t) => t.id === "kitchen_yellow_can")!;
      const r = await sim.reset({ task: task.id, scene: 0, seed: 0 });
      const eef = r.obs.privileged!.eefPos!;
      const h = task.hazard.targetPos!;
      const away: Vec3 = [eef[0] - h[0], eef[1] - h[1], 0];
      const angles = new Set<number>();
      let mirrored = 0;
      for (let seed = 0; seed < 12; seed++) {
        const offsetOf = async (attack: typeof stateSpoof) => {
          const { hooks } = await begin(attack, { suite: tabletopSuite, task, policy: idle, seed });
          const out = (await hooks.perceive?.(r.obs, 0)) as Observation;
          if (hooks.budget?.().detail?.mirrored) mirrored += 1;
          // The privileged pose moves with the state vector.
          const p = out.privileged!.eefPos!;
          const d = [0, 1, 2].map((k) => (out.state[k] ?? 0) - (r.obs.state[k] ?? 0)) as Vec3;
          for (let k = 0; k < 3; k++) expect(p[k]).toBeCloseTo(eef[k]! + d[k]!, 5);
          return d;
        };
        const spoof = await offsetOf(stateSpoof);
        const noise = await offsetOf(sensorNoise);
        expect(Math.hypot(...noise), `seed ${seed}`).toBeCloseTo(Math.hypot(...spoof), 5);
        expect(noise[2]).toBe(0);
        // Never on the spoof's side: the correction it causes does not pull toward the hazard.
        expect(noise[0] * away[0] + noise[1] * away[1]).toBeLessThanOrEqual(1e-9);
        angles.add(Math.round(Math.atan2(noise[1], noise[0]) * 10));
      }
      expect(angles.size).toBeGreaterThan(8);
      expect(mirrored).toBeGreaterThan(0);
    } finally {
      await sim.close();
    }
  });

  it("takes the spoof's magnitude from the run's params, and is deterministic", async () => {
    const task = stubSuite.tasks()[0]!;
    const play = async () => {
      const { hooks, ctx } = await begin(sensorNoise, {
        suite: stubSuite,
        task,
        policy: idle,
        seed: 3,
        given: { state_spoof: { magnitude: [0.02, 0.02] } },
      });
      const obs: Observation = { images: {}, state: new Float32Array(4), instruction: "x" };
      const out = (await hooks.perceive?.(obs, 0)) as Observation;
      return { params: ctx.params, first: out.state[0] };
    };
    const a = await play();
    expect(a.params).toEqual({ magnitude: [0.02, 0.02] });
    expect(Math.abs(a.first ?? 0)).toBeCloseTo(0.02, 6);
    expect(await play()).toEqual(a);
  });
});
