/** Every registered policy must satisfy the same contract. */
import { describe, expect, it } from "vitest";
import { policies } from "../../src/policies/index.js";
import { suites } from "../../src/suites/index.js";

// Policies that need a server or a user file are covered by their own tests.
const NEEDS_EXTERNAL = new Set(["openpi", "openvla", "vla-eval", "onnx"]);

describe.each(
  policies.items.filter((p) => !NEEDS_EXTERNAL.has(p.id)).map((p) => [p.id, p] as const),
)("policy %s", (_id, policy) => {
  it("acts with finite actions of its declared size, deterministically per policy seed", async () => {
    const suite = suites.get(policy.suites[0] ?? "stub");
    const task = suite.tasks()[0];
    if (!task) throw new Error("no task");
    const run = async () => {
      const inst = await policy.load({});
      const env = await suite.open();
      try {
        expect(inst.capabilities.actionDim).toBe(suite.actionSpace.dim);
        let r = await env.reset({ task: task.id, scene: 0, seed: 0 });
        await inst.reset({ task: task.id, seed: 0, policySeed: 7 });
        const actions: number[][] = [];
        for (let i = 0; i < 5; i++) {
          const { privileged, ...plain } = r.obs;
          const obs = inst.capabilities.privileged && privileged ? { ...plain, privileged } : plain;
          const a = await inst.act(obs);
          expect(a.length).toBe(inst.capabilities.actionDim);
          expect(Array.from(a).every(Number.isFinite)).toBe(true);
          actions.push(Array.from(a));
          r = await env.step(a);
        }
        return actions;
      } finally {
        await env.close();
        await inst.close();
      }
    };
    expect(await run()).toEqual(await run());
  });

  it("describes itself", () => {
    expect(policy.description.length).toBeGreaterThan(10);
    expect(policy.capabilities.chunk).toBeGreaterThanOrEqual(1);
  });
});
