import { describe, expect, it } from "vitest";
import { begin, fakePolicy, flatObservation } from "../../test/support/attack-context.js";
import { Rng } from "../core/rng.js";
import type { Observation, Vec3 } from "../core/types.js";
import { defaultConfig, initWeights } from "../policies/tiny-vla/model.js";
import { TinyVlaInstance } from "../policies/tiny-vla/policy.js";
import { TinyVlaRuntime } from "../policies/tiny-vla/runtime.js";
import { syntheticInstructions, syntheticScene } from "../policies/tiny-vla/synthetic.js";
import { Tokenizer } from "../policies/tiny-vla/tokenizer.js";
import { tabletopSuite } from "../suites/mujoco/tabletop.js";
import { gradientPatch, randomSignNoise } from "./gradient.js";
import type { PatchRegion } from "./pixels.js";

const kitchen = tabletopSuite.tasks().find((t) => t.id === "kitchen_red_block")!;
const EEF: Vec3 = [-0.3, 0.1, 1.05];

/** Checks every changed byte lies in the region and moved by at most `bound`. */
function expectInside(
  before: Uint8Array,
  after: Uint8Array,
  width: number,
  r: PatchRegion,
  bound: number,
) {
  let changed = 0;
  for (let i = 0; i < before.length; i++) {
    const d = Math.abs((after[i] ?? 0) - (before[i] ?? 0));
    if (d === 0) continue;
    changed += 1;
    const px = Math.floor(i / 3);
    const x = px % width;
    const y = Math.floor(px / width);
    expect(x >= r.x && x < r.x + r.size && y >= r.y && y < r.y + r.size).toBe(true);
    expect(d).toBeLessThanOrEqual(bound);
  }
  return changed;
}

describe("gradient_patch", () => {
  it("runs PGD inside the L-infinity bound on the patch region only", async () => {
    // The gradient is +1 on red, -1 on blue, 0 on green, everywhere: PGD must saturate the bound.
    const policy = fakePolicy(() => new Float32Array(7), {
      differentiable: {
        inputGradient: async (obs, camera) => {
          const img = obs.images[camera]!;
          const g = new Float32Array(img.width * img.height * 3);
          for (let i = 0; i < g.length; i += 3) {
            g[i] = 1;
            g[i + 2] = -1;
          }
          return { value: 0, grad: g };
        },
      },
    });
    const { hooks } = await begin(gradientPatch, { suite: tabletopSuite, task: kitchen, policy });
    const obs: Observation = {
      ...flatObservation(128, 128, ["agentview", "wrist"]),
      privileged: { eefPos: EEF },
    };
    const out = (await hooks.perceive?.(obs, 0)) as Observation;
    const b = hooks.budget?.();
    const r = b?.detail?.region as PatchRegion;
    const changed = expectInside(
      obs.images.agentview!.data,
      out.images.agentview!.data,
      128,
      r,
      16,
    );
    expect(changed).toBe(2 * r.size * r.size);
    const at = (r.y * 128 + r.x) * 3;
    expect(Array.from(out.images.agentview!.data.slice(at, at + 3))).toEqual([116, 100, 84]);
    expect(out.images.wrist).toBe(obs.images.wrist);
    expect(b).toMatchObject({ kind: "pgd-steps", used: 5, limit: 5 * 12 });
    expect(b?.detail).toMatchObject({
      epsilon: 16 / 255,
      epsilon_pixels: 16,
      steps_per_refresh: 5,
      refreshes: 1,
    });
    // Between refreshes the perturbation is reapplied without new gradients; every 25 steps it refreshes.
    for (let step = 1; step < 60; step++) await hooks.perceive?.(obs, step);
    expect(hooks.budget?.()).toMatchObject({ used: 15, detail: { refreshes: 3 } });
  });

  it("raises the objective of a real differentiable policy (tiny-vla, random weights) within the bound", async () => {
    const tok = Tokenizer.build(syntheticInstructions(), 16);
    const cfg = defaultConfig(
      tok.size,
      {
        stateMean: [0, 0, 1, 0, 0, 0, 0, 0, 0, 0.04, 0.04],
        stateStd: [0.6, 0.6, 0.1, 1, 1, 1, 1, 1, 1, 0.01, 0.01],
        actionScale: [0.8, 0.8, 0.05, 0.05, 0.05, 0.05, 1],
      },
      { imageSize: 32, patch: 8, dim: 32, textDim: 32, keypoints: 4, pooled: 8, hidden: [64] },
    );
    const rt = await TinyVlaRuntime.create({
      config: cfg,
      text: tok,
      weights: initWeights(cfg, Rng.fromLabel("pgd")),
    });
    const policy = new TinyVlaInstance(rt, "sha256:test", 1);
    try {
      const { obs: scene } = syntheticScene("pgd");
      const obs: Observation = { ...scene, privileged: { eefPos: EEF } };
      const { hooks } = await begin(gradientPatch, {
        suite: tabletopSuite,
        task: kitchen,
        policy,
        params: { steps: 8, size: 0.25 },
      });
      const out = (await hooks.perceive?.(obs, 0)) as Observation;
      const d = hooks.budget?.().detail as {
        first_objective: number;
        last_objective: number;
        region: PatchRegion;
      };
      expect(d.last_objective).toBeGreaterThan(d.first_objective);
      const img = obs.images.agentview!;
      expect(
        expectInside(img.data, out.images.agentview!.data, img.width, d.region, 16),
      ).toBeGreaterThan(0);
    } finally {
      policy.close();
    }
  });
});

describe("random_sign_noise", () => {
  it("adds ±ε to every value of the gradient patch's region, with random signs, redrawn on its refresh", async () => {
    let gradients = 0;
    const policy = fakePolicy(() => new Float32Array(7), {
      differentiable: {
        inputGradient: async () => {
          gradients += 1;
          return { value: 0, grad: new Float32Array(0) };
        },
      },
    });
    const given = { gradient_patch: { epsilon: 8 / 255, refresh: 10 } };
    const obs: Observation = {
      ...flatObservation(128, 128, ["agentview", "wrist"]),
      privileged: { eefPos: EEF },
    };
    const g = await begin(gradientPatch, { suite: tabletopSuite, task: kitchen, policy, given });
    await g.hooks.perceive?.(obs, 0);
    const { hooks, ctx } = await begin(randomSignNoise, {
      suite: tabletopSuite,
      task: kitchen,
      policy,
      given,
    });
    expect(ctx.params).toMatchObject({ epsilon: 8 / 255, refresh: 10 });
    gradients = 0;
    const out = (await hooks.perceive?.(obs, 0)) as Observation;
    const r = hooks.budget?.().detail?.region as PatchRegion;
    // The same pixels as the gradient attack's, in the same cell.
    expect(r).toEqual(g.hooks.budget?.().detail?.region);
    const before = obs.images.agentview!.data;
    const after = out.images.agentview!.data;
    expect(expectInside(before, after, 128, r, 8)).toBe(3 * r.size * r.size);
    let plus = 0;
    for (let i = 0; i < before.length; i++) {
      const d = after[i]! - before[i]!;
      if (d !== 0) expect(Math.abs(d)).toBe(8);
      if (d > 0) plus += 1;
    }
    const n = 3 * r.size * r.size;
    expect(plus).toBeGreaterThan(0.4 * n);
    expect(plus).toBeLessThan(0.6 * n);
    expect(out.images.wrist).toBe(obs.images.wrist);
    const at = (step: number) => (hooks.perceive!(obs, step) as Observation).images.agentview!.data;
    expect(at(5)).toEqual(after);
    expect(at(10)).not.toEqual(after);
    expect(hooks.budget?.().detail).toMatchObject({ draws: 2, epsilon_pixels: 8 });
    expect(gradients, "no gradient is used").toBe(0);
    // Deterministic per cell.
    const again = await begin(randomSignNoise, {
      suite: tabletopSuite,
      task: kitchen,
      policy,
      given,
    });
    expect(((await again.hooks.perceive!(obs, 0)) as Observation).images.agentview!.data).toEqual(
      after,
    );
  });
});
