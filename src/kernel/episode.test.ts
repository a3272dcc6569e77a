import { describe, expect, it } from "vitest";
import { fakePolicy } from "../../test/support/attack-context.js";
import { stubPlan } from "../../test/support/stub-run.js";
import { attacks } from "../attacks/index.js";
import type { Predicate } from "../core/types.js";
import { policies } from "../policies/index.js";
import { suites } from "../suites/index.js";
import { playEpisode } from "./episode.js";

/** A keep-out zone that never gets a pose: every step unjudged. */
const blindKeepOut: Predicate = {
  id: "keep_out",
  description: "a zone the state never locates the hand in",
  evaluate: () => ({ unsafe: false, judged: false }),
};

/** A force predicate judging every step; unsafe, with 3 N of excess, on the steps listed. */
function force(unsafeSteps: Set<number>): Predicate {
  let step = -1;
  return {
    id: "physical_hazard",
    description: "a force test",
    measuresCost: true,
    evaluate: () => {
      step += 1;
      return unsafeSteps.has(step)
        ? { unsafe: true, judged: true, cost: 3 }
        : { unsafe: false, judged: true, cost: 0 };
    },
  };
}

async function play(predicates: Predicate[]) {
  const suite = suites.get("stub");
  const task = suite.tasks()[0];
  if (!task) throw new Error("stub has no task");
  const { record } = await playEpisode(
    { id: "c-judged", task: task.id, arm: "none", seed: 0, repeat: 0 },
    {
      plan: stubPlan({ tasks: [task.id], arms: ["none"], seed: 0, seeds: 1 }),
      suite,
      instance: await suite.open(),
      policy: await policies.get("stub").load({}),
      attack: attacks.get("none"),
      applicable: true,
      task,
      predicates,
    },
  );
  return record;
}

describe("judged steps per predicate", () => {
  it("leaves a step unjudged when one predicate could not judge it, though another judged it safe", async () => {
    const r = await play([blindKeepOut, force(new Set())]);
    expect(r.steps).toBeGreaterThan(0);
    expect(r.judged_steps).toBe(0);
    expect(r.unsafe).toBeNull();
    expect(r.endpoints.keep_out).toMatchObject({ unsafe: null, judged_steps: 0 });
    expect(r.endpoints.physical_hazard).toMatchObject({ unsafe: false, judged_steps: r.steps });
    expect(r.cost).toBe(0);
  });

  it("counts a step unsafe when one predicate judged it unsafe, and sums the cost", async () => {
    const r = await play([blindKeepOut, force(new Set([2, 3, 7]))]);
    expect(r.unsafe).toBe(true);
    expect(r.first_unsafe_step).toBe(2);
    expect(r.unsafe_steps).toBe(3);
    // Only the unsafe steps are decided for the combined endpoint: the others are unknown.
    expect(r.judged_steps).toBe(3);
    expect(r.endpoints.physical_hazard).toMatchObject({ unsafe: true, steps: 3, cost: 9 });
    expect(r.endpoints.keep_out?.unsafe).toBeNull();
    expect(r.cost).toBe(9);
  });

  it("judges a step when every predicate judged it", async () => {
    const r = await play([force(new Set())]);
    expect(r.judged_steps).toBe(r.steps);
    expect(r.unsafe).toBe(false);
  });
});

describe("perturbed inputs and the received digest of a lazily drawn patch", () => {
  /** A patch episode whose policy reads its camera on the steps `reads` picks. */
  async function patched(reads: (step: number) => boolean) {
    const suite = suites.get("stub");
    const task = suite.tasks()[0];
    if (!task) throw new Error("stub has no task");
    let step = 0;
    const policy = fakePolicy((obs) => {
      if (reads(step++)) void obs.images.agentview;
      return new Float32Array(7);
    });
    const { record } = await playEpisode(
      { id: "c-patch", task: task.id, arm: "patch", seed: 0, repeat: 0 },
      {
        plan: stubPlan({ tasks: [task.id], arms: ["patch"], seed: 0, seeds: 1 }),
        suite,
        instance: await suite.open(),
        policy,
        attack: attacks.get("patch"),
        applicable: true,
        task,
        predicates: [force(new Set())],
      },
    );
    return record;
  }

  it("counts the patch as delivered once the policy read it, and hashes only what it read", async () => {
    const never = await patched(() => false);
    const first = await patched((s) => s === 0);
    const again = await patched((s) => s === 0);
    expect(never.steps).toBeGreaterThan(1);
    expect(never.perturbed.inputs).toBe(false);
    expect(first.perturbed.inputs).toBe(true);
    expect(first.received_digest).not.toBe(never.received_digest);
    expect(again.received_digest).toBe(first.received_digest);
    expect((await patched(() => true)).received_digest).not.toBe(first.received_digest);
  });
});
