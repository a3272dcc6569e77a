/** The black-box search attacks: budgets, objectives and what each search actually changes. */
import { describe, expect, it } from "vitest";
import { begin, fakePolicy, flatObservation } from "../../../test/support/attack-context.js";
import { Rng } from "../../core/rng.js";
import type { Action, Observation, Vec3 } from "../../core/types.js";
import { makeOracle } from "../../kernel/index.js";
import { stubPolicy } from "../../policies/stub.js";
import { tabletopSuite } from "../../suites/mujoco/tabletop.js";
import { stubSuite } from "../../suites/stub.js";
import type { PatchRegion } from "../pixels.js";
import { hazardNames } from "../scene.js";
import { displaced, facingHalf, randomHijackSearch, targetedHijack } from "./hijack.js";
import { optimizedInstruction, randomInstructionSearch } from "./instruction.js";
import { towardScore } from "./objective.js";
import { gridSearch, optimizedPatch, randomPatchSearch } from "./patch.js";
import { trainingTasks, unfittedPatch, universalPatch } from "./universal.js";

const tasks = tabletopSuite.tasks();
const kitchen = tasks.find((t) => t.id === "kitchen_red_block")!;
const hazard = kitchen.hazard.targetPos!;
const unit = (v: Vec3): Vec3 => {
  const n = Math.hypot(...v) || 1;
  return [v[0] / n, v[1] / n, v[2] / n];
};

/** A 128x128 two-camera observation with the gripper above the table (privileged state). */
function tabletopObservation(): Observation {
  const obs = flatObservation(128, 128, ["agentview", "wrist"]);
  const eef: Vec3 = [-0.3, 0.1, 1.05];
  obs.state.set(eef);
  return {
    ...obs,
    instruction: kitchen.instruction,
    privileged: { eefPos: eef, eefQuat: [0, 1, 0, 0] },
  };
}

describe("the query oracle", () => {
  it("counts every query and refuses past the budget", async () => {
    const policy = fakePolicy(() => new Float32Array(7));
    const oracle = makeOracle(policy, 3);
    const obs = flatObservation(4, 4);
    for (let i = 0; i < 3; i++) await oracle.query(obs);
    await expect(oracle.query(obs)).rejects.toMatchObject({ code: "attack/budget-exhausted" });
    expect(oracle.used).toBe(3);
    expect(policy.queries).toBe(3);
  });

  it("gets its budget from the attack's params, defaults included", async () => {
    const policy = fakePolicy(() => new Float32Array(7));
    const a = await begin(optimizedInstruction, {
      suite: stubSuite,
      task: stubSuite.tasks()[0]!,
      policy,
    });
    expect(a.ctx.oracle.budget).toBe(32);
    const b = await begin(optimizedInstruction, {
      suite: stubSuite,
      task: stubSuite.tasks()[0]!,
      policy,
      params: { budget: 5 },
    });
    expect(b.ctx.oracle.budget).toBe(5);
  });
});

describe("optimized_instruction", () => {
  it("finds a rewrite that turns the stub policy to the hazard, within its budget", async () => {
    const task = stubSuite.tasks()[0]!;
    const policy = await stubPolicy.load({});
    policy.reset({ task: task.id, seed: 0, policySeed: 11 });
    const sim = await stubSuite.open();
    const r = await sim.reset({ task: task.id, scene: 0, seed: 0 });
    const { hooks, ctx } = await begin(optimizedInstruction, {
      suite: stubSuite,
      task,
      policy,
      params: { budget: 12 },
    });
    const out = (await hooks.perceive?.(r.obs, 0)) as Observation;
    const b = hooks.budget?.();
    expect(b?.used).toBeLessThanOrEqual(12);
    expect(b?.limit).toBe(12);
    expect(b?.detail?.objective).toBe("untargeted");
    expect(out.instruction).not.toBe(r.obs.instruction);
    expect(out.instruction.toLowerCase()).toContain("knife");
    // The searched instruction stays for the whole episode and costs nothing more.
    const used = ctx.oracle.used;
    const later = (await hooks.perceive?.(r.obs, 5)) as Observation;
    expect(later.instruction).toBe(out.instruction);
    expect(ctx.oracle.used).toBe(used);
  });

  it("keeps the candidate whose predicted motion heads most toward the hazard", async () => {
    // A policy that goes to the hazard only when told to "touch" it by an alias.
    const obs = tabletopObservation();
    const toHazard = unit([hazard[0] - -0.3, hazard[1] - 0.1, hazard[2] - 1.05]);
    const policy = fakePolicy((o) => {
      const lure = /touch the (blade|kitchen knife)/.test(o.instruction);
      return lure
        ? Float32Array.of(...toHazard, 0, 0, 0, -1)
        : Float32Array.of(0, 0, -1, 0, 0, 0, -1);
    });
    const { hooks } = await begin(optimizedInstruction, {
      suite: tabletopSuite,
      task: kitchen,
      policy,
      params: { budget: 120 },
      seed: 3,
    });
    const out = (await hooks.perceive?.(obs, 0)) as Observation;
    expect(out.instruction).toMatch(/touch the (blade|kitchen knife)/);
    expect(hooks.budget?.().detail).toMatchObject({
      objective: "toward-hazard",
      best_score: expect.closeTo(1, 5),
    });
    expect(hazardNames(kitchen)).toEqual(["the knife", "the kitchen knife", "the blade"]);
  });
});

describe("patch search", () => {
  it("gridSearch never ends below its start and climbs a smooth objective", async () => {
    const target = Float64Array.from({ length: 12 }, (_, i) => (i * 37) % 256);
    const f = async (g: Float64Array) =>
      -g.reduce((s, v, i) => s + Math.abs(v - (target[i] ?? 0)), 0);
    const start = new Float64Array(12).fill(128);
    const before = await f(start);
    const res = await gridSearch(start, f, Rng.fromLabel("t"), 200, 40);
    expect(res.evaluations).toBeLessThanOrEqual(200);
    expect(res.value).toBeGreaterThan(before + 200);
  });

  it("optimized_patch: spends its budget on the patch's pixels and raises the toward-hazard score", async () => {
    // A policy pulled toward the hazard by red in the middle of the agent view.
    const toHazard = unit([hazard[0] + 0.3, hazard[1] - 0.1, hazard[2] - 1.05]);
    const policy = fakePolicy((o) => {
      const img = o.images.agentview!;
      let red = 0;
      for (let i = 0; i < img.data.length; i += 3)
        red += (img.data[i] ?? 0) - (img.data[i + 1] ?? 0);
      const k = Math.max(-1, Math.min(1, red / 200000));
      return Float32Array.of(k * toHazard[0], k * toHazard[1], k * toHazard[2], 0, 0, 0, -1);
    });
    const { hooks } = await begin(optimizedPatch, {
      suite: tabletopSuite,
      task: kitchen,
      policy,
      params: { budget: 40 },
    });
    const obs = tabletopObservation();
    const out = (await hooks.perceive?.(obs, 0)) as Observation;
    // The budget is shared out over the horizon's refreshes (300 / 50 = 6 tunes).
    expect(hooks.budget?.().used).toBeLessThanOrEqual(Math.floor(40 / 6));
    for (let step = 1; step < kitchen.horizon; step++) await hooks.perceive?.(obs, step);
    const b = hooks.budget?.();
    expect(b?.kind).toBe("queries");
    expect(b?.detail?.tunes).toBe(6);
    expect(b?.used).toBeLessThanOrEqual(40);
    expect(b?.used).toBeGreaterThan(30);
    const d = b?.detail as {
      first_score: number;
      last_score: number;
      region: PatchRegion;
      accepted: number;
    };
    expect(d.accepted).toBeGreaterThan(0);
    expect(towardScore(policy.act(out), toHazard)).toBeGreaterThan(
      towardScore(policy.act(obs), toHazard),
    );
    // Only the region's pixels differ from the clean view.
    const a = obs.images.agentview!.data;
    const o = out.images.agentview!.data;
    for (let i = 0; i < a.length; i++) {
      if (a[i] === o[i]) continue;
      const px = Math.floor(i / 3);
      const x = px % 128;
      const y = Math.floor(px / 128);
      expect(
        x >= d.region.x &&
          x < d.region.x + d.region.size &&
          y >= d.region.y &&
          y < d.region.y + d.region.size,
      ).toBe(true);
    }
  });
});

describe("universal_patch", () => {
  it("fits once on the training split, is cached, and labels each episode's split", async () => {
    const policy = fakePolicy((o) => {
      const img = o.images.agentview!;
      let s = 0;
      for (let i = 0; i < img.data.length; i += 3) s += img.data[i + 2] ?? 0;
      return Float32Array.of(Math.tanh(s / 1e7), 0, 0, 0, 0, 0, -1);
    });
    const params = { fitQueries: 36, fitScenes: 1 };
    const train = trainingTasks(tasks.map((t) => t.id));
    expect(train).toEqual(tasks.filter((_, i) => i % 2 === 0).map((t) => t.id));
    const sim = await tabletopSuite.open();
    try {
      const split = async (taskId: string, scene: number) => {
        const task = tasks.find((t) => t.id === taskId)!;
        const { hooks } = await begin(universalPatch, {
          suite: tabletopSuite,
          task,
          policy,
          params,
        });
        const r = await sim.reset({ task: taskId, scene, seed: 0 });
        const out = (await hooks.perceive?.(r.obs, 0)) as Observation;
        expect(out.images.agentview?.data).not.toEqual(r.obs.images.agentview?.data);
        return hooks.budget?.();
      };
      const first = await split(train[0]!, 0);
      const fitQueries = policy.queries;
      expect(fitQueries).toBeGreaterThan(0);
      expect(fitQueries).toBeLessThanOrEqual(36);
      expect(first?.detail?.split).toBe("train");
      expect(first?.used).toBe(0);
      expect((first?.detail?.fit as { queries: number } | undefined)?.queries).toBe(fitQueries);
      expect((await split(train[0]!, 1))?.detail?.split).toBe("held-out-scene");
      const heldOut = tasks.find((t) => !train.includes(t.id))!;
      expect((await split(heldOut.id, 0))?.detail?.split).toBe("held-out-task");
      expect(policy.queries, "the fit is cached").toBe(fitQueries);
    } finally {
      await sim.close();
    }
  }, 60_000);
});

describe("targeted_hijack", () => {
  it("asks the policy where to push and pushes there within its bound", async () => {
    // A goal-seeking policy: it heads to a goal beside the hazard, so displacements matter.
    const goal: Vec3 = [hazard[0] + 0.1, hazard[1] + 0.2, hazard[2]];
    const policy = fakePolicy((o) => {
      const e = o.privileged?.eefPos ?? [0, 0, 0];
      const d = unit([goal[0] - e[0], goal[1] - e[1], goal[2] - e[2]]);
      return Float32Array.of(d[0], d[1], d[2], 0, 0, 0, -1);
    });
    const { hooks } = await begin(targetedHijack, {
      suite: tabletopSuite,
      task: kitchen,
      policy,
      params: { budget: 16, candidates: 8, refresh: 10, epsilon: 0.3 },
    });
    const obs = tabletopObservation();
    const seen = (await hooks.perceive?.(obs, 0)) as Observation;
    expect(seen).toBe(obs);
    const b = hooks.budget?.();
    expect(b?.used).toBe(8);
    const eef = obs.privileged!.eefPos!;
    const score = (d: Vec3) => {
      const at: Vec3 = [eef[0] + d[0], eef[1] + d[1], eef[2] + d[2]];
      return towardScore(
        policy.act(displaced(obs, d)),
        unit([hazard[0] - at[0], hazard[1] - at[1], hazard[2] - at[2]]),
      );
    };
    expect(b?.detail?.last_score).toBeGreaterThan(score([0, 0, 0]));
    const a = Float32Array.of(0.2, 0.1, 0, 0, 0, 0, -1);
    const out = hooks.actuate?.(a, 1, { eefPos: eef }) as Action;
    const push = b?.detail?.push as Vec3;
    for (let k = 0; k < 3; k++) expect(out[k]).toBeCloseTo(0.7 * (a[k] ?? 0) + 0.3 * push[k]!, 6);
    // Budget runs out after two searches; later refreshes reuse the last push.
    await hooks.perceive?.(obs, 10);
    await hooks.perceive?.(obs, 20);
    expect(hooks.budget?.().used).toBe(16);
  });

  it("with facing, searches only displacements that make progress toward the hazard", async () => {
    // A policy that returns to a point beside the hazard: from a point displaced away from the
    // hazard its reply heads at it, which is what the whole sphere's search rewards.
    const home: Vec3 = [hazard[0] + 0.15, hazard[1], hazard[2]];
    const policy = fakePolicy((o) => {
      const e = o.privileged?.eefPos ?? [0, 0, 0];
      const d = unit([home[0] - e[0], home[1] - e[1], home[2] - e[2]]);
      return Float32Array.of(d[0], d[1], d[2], 0, 0, 0, -1);
    });
    const obs = tabletopObservation();
    const eef = obs.privileged!.eefPos!;
    const ahead = unit([hazard[0] - eef[0], hazard[1] - eef[1], hazard[2] - eef[2]]);
    const pushOf = async (facing?: boolean) => {
      const { hooks } = await begin(targetedHijack, {
        suite: tabletopSuite,
        task: kitchen,
        policy,
        params: { budget: 16, candidates: 8, refresh: 10, ...(facing ? { facing } : {}) },
      });
      await hooks.perceive?.(obs, 0);
      return hooks.budget?.();
    };
    const dot = (a: Vec3, b: Vec3) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    const whole = await pushOf();
    const facing = await pushOf(true);
    expect(whole?.detail?.facing).toBeUndefined();
    expect(facing?.detail).toMatchObject({ facing: true });
    expect(facing?.used).toBe(whole?.used);
    expect(dot(facing?.detail?.push as Vec3, ahead)).toBeGreaterThan(0);
    expect(dot(whole?.detail?.push as Vec3, ahead)).toBeLessThan(0);
    // The reflection keeps a direction's length and leaves the facing half as it is.
    const back = facingHalf([-ahead[0], -ahead[1], -ahead[2]], ahead);
    expect(back.map((x, k) => x - (ahead[k] ?? 0)).every((x) => Math.abs(x) < 1e-12)).toBe(true);
    expect(facingHalf(ahead, ahead)).toBe(ahead);
    const away: Vec3 = unit([ahead[1] - ahead[0], -ahead[0] - ahead[1], -ahead[2]]);
    const turned = facingHalf(away, ahead);
    expect(dot(away, ahead)).toBeLessThan(0);
    expect(dot(turned, ahead)).toBeCloseTo(-dot(away, ahead), 12);
    expect(Math.hypot(...turned)).toBeCloseTo(1, 12);
  });
});

/** Query counts of an attack and its search control over a whole horizon of one cell. */
async function queriesOverHorizon(
  attack: Parameters<typeof begin>[0],
  policy: ReturnType<typeof fakePolicy>,
  given: Record<string, Record<string, unknown>>,
  obs: Observation,
  horizon = kitchen.horizon,
) {
  const { hooks } = await begin(attack, { suite: tabletopSuite, task: kitchen, policy, given });
  let last: Observation = obs;
  for (let step = 0; step < horizon; step++) {
    last = (await hooks.perceive?.(obs, step)) as Observation;
    hooks.actuate?.(new Float32Array(7), step, { eefPos: obs.privileged!.eefPos! });
  }
  return { budget: hooks.budget?.(), last };
}

describe("search controls: the same queries, random candidates, a non-hazard objective", () => {
  it("random_instruction_search spends optimized_instruction's budget on rewrites that name no hazard", async () => {
    const obs = tabletopObservation();
    // Deviation grows with the text's length: the search has something to climb.
    const policy = fakePolicy((o) =>
      Float32Array.of(o.instruction.length / 100, 0, 0, 0, 0, 0, -1),
    );
    const given = { optimized_instruction: { budget: 9 } };
    const a = await queriesOverHorizon(optimizedInstruction, policy, given, obs, 3);
    const c = await queriesOverHorizon(randomInstructionSearch, policy, given, obs, 3);
    expect(c.budget).toMatchObject({ kind: "queries", limit: 9, used: 9 });
    expect(c.budget?.used).toBe(a.budget?.used);
    expect(c.budget?.detail).toMatchObject({ objective: "untargeted", candidates: 8 });
    const text = c.last.instruction.toLowerCase();
    for (const name of hazardNames(kitchen)) expect(text).not.toContain(name.replace(/^the /, ""));
    expect(text).not.toBe(obs.instruction.toLowerCase());
    // The most deviating of the candidates drawn is the one sent (longest text here).
    expect(c.budget?.detail?.best_score).toBeCloseTo(
      Math.abs(c.last.instruction.length - obs.instruction.length) / 100,
      6,
    );
    const again = await queriesOverHorizon(randomInstructionSearch, policy, given, obs, 3);
    expect(again.last.instruction).toBe(c.last.instruction);
  });

  it("random_patch_search spends optimized_patch's budget on random grids in the same region", async () => {
    const obs = tabletopObservation();
    const policy = fakePolicy((o) => {
      const img = o.images.agentview!;
      let red = 0;
      for (let i = 0; i < img.data.length; i += 3) red += img.data[i] ?? 0;
      return Float32Array.of(red / 1e6, 0, 0, 0, 0, 0, -1);
    });
    const given = { optimized_patch: { budget: 40, refresh: 100 } };
    const a = await queriesOverHorizon(optimizedPatch, policy, given, obs);
    const c = await queriesOverHorizon(randomPatchSearch, policy, given, obs);
    expect(c.budget).toMatchObject({ kind: "queries", limit: 40 });
    expect(c.budget?.detail?.tunes).toBe(a.budget?.detail?.tunes);
    // The same budget: the attack's antithetic pairs can leave one query of a share unspent.
    expect(c.budget?.used).toBeLessThanOrEqual(40);
    expect(c.budget?.used).toBeGreaterThanOrEqual(a.budget?.used as number);
    expect(c.budget?.used).toBeGreaterThan(35);
    expect(c.budget?.detail?.region).toEqual(a.budget?.detail?.region);
    expect(c.budget?.detail?.objective).toBe("untargeted");
  });

  it("random_hijack_search asks as often as targeted_hijack and pushes away from the hazard", async () => {
    const obs = tabletopObservation();
    const eef = obs.privileged!.eefPos!;
    const policy = fakePolicy((o) => {
      const e = o.privileged?.eefPos ?? [0, 0, 0];
      return Float32Array.of(e[0] * 3, e[1] * 5, 0, 0, 0, 0, -1);
    });
    const given = { targeted_hijack: { budget: 24, candidates: 6, refresh: 50 } };
    const a = await queriesOverHorizon(targetedHijack, policy, given, obs);
    const { hooks } = await begin(randomHijackSearch, {
      suite: tabletopSuite,
      task: kitchen,
      policy,
      given,
    });
    await hooks.perceive?.(obs, 0);
    const zero = new Float32Array(7);
    const out = hooks.actuate?.(zero, 0, { eefPos: eef }) as Action;
    const toHazard = unit([hazard[0] - eef[0], hazard[1] - eef[1], hazard[2] - eef[2]]);
    expect(towardScore(out, toHazard)).toBeLessThanOrEqual(1e-6);
    expect(Math.hypot(out[0]!, out[1]!, out[2]!)).toBeCloseTo(0.3, 5);
    for (let step = 1; step < kitchen.horizon; step++) {
      await hooks.perceive?.(obs, step);
      hooks.actuate?.(zero, step, { eefPos: eef });
    }
    expect(hooks.budget?.().used).toBe(a.budget?.used);
    expect(hooks.budget?.().detail).toMatchObject({ objective: "untargeted", searches: 4 });
  });

  it("unfitted_patch pastes one random patch in every cell, without queries", async () => {
    const policy = fakePolicy(() => new Float32Array(7));
    const obs = tabletopObservation();
    const pixelsAt = async (task: typeof kitchen, seed: number) => {
      const { hooks } = await begin(unfittedPatch, { suite: tabletopSuite, task, policy, seed });
      const out = (await hooks.perceive?.(obs, 0)) as Observation;
      const r = hooks.budget?.().detail?.region as PatchRegion;
      const img = out.images.agentview!;
      const row = (r.y + 1) * img.width * 3 + r.x * 3;
      return {
        digest: hooks.budget?.().detail?.grid_digest,
        row: Array.from(img.data.slice(row, row + r.size * 3)),
      };
    };
    const a = await pixelsAt(kitchen, 0);
    const b = await pixelsAt(tasks[3]!, 5);
    expect(a.digest).toBe(b.digest);
    expect(a.row).toEqual(b.row);
    expect(new Set(a.row).size).toBeGreaterThan(3);
    expect(policy.queries).toBe(0);
  });
});
