/** Every registered attack must satisfy the same contract. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderAttackDocs } from "../../src/attacks/docs.js";
import { attacks } from "../../src/attacks/index.js";
import { policies } from "../../src/policies/index.js";
import { playEpisode } from "../../src/runner/episode.js";
import type { PlanSpec } from "../../src/runner/plan.js";
import { notApplicableReason } from "../../src/runner/run.js";
import { suites } from "../../src/suites/index.js";
import { stubPlan } from "../support/stub-run.js";

const ACCESS = [
  "none",
  "black-box-query",
  "white-box-gradient",
  "in-scene-physical",
  "action-channel",
  "weights",
];

/**
 * Attacks whose requirements the stub pair does not meet (no scene editing, no physics, a policy
 * that reads no images and has neither gradients nor weights). Listed so that an attack never
 * becomes N/A on the stub pair by accident: each must be N/A there for a declared reason.
 */
const NOT_APPLICABLE_ON_STUB = new Set([
  "placebo_patch",
  "patch",
  "neutral_decoy",
  "decoy_object",
  "scene_text",
  "trajectory_hijack",
  "optimized_patch",
  "universal_patch",
  "targeted_hijack",
  "gradient_patch",
  "weight_bitflip_1",
  "weight_bitflip_8",
  "weight_bitflip_64",
]);

function stubReason(attackId: string): string | null {
  return notApplicableReason(
    attacks.get(attackId),
    // The stub policy answers queries, as the runner's probe of a loaded instance would find.
    { ...policies.get("stub").capabilities, queryable: true },
    suites.get("stub").capabilities,
  );
}

async function episodeOnStub(attackId: string, seed: number, applicable = true) {
  const suite = suites.get("stub");
  const policy = await policies.get("stub").load({});
  const instance = await suite.open();
  const task = suite.tasks()[0];
  if (!task) throw new Error("stub has no task");
  // The task's own horizon (20, stubPlan's null): long enough for windowed attacks (freeze) to open.
  const plan: PlanSpec = stubPlan({ tasks: [task.id], arms: [attackId], seed, seeds: 1 });
  const { record } = await playEpisode(
    { id: `c-${attackId}-${seed}`, task: task.id, arm: attackId, seed, repeat: 0 },
    {
      plan,
      suite,
      instance,
      policy,
      attack: attacks.get(attackId),
      applicable,
      task,
      predicates: suite.predicates(task.id),
    },
  );
  return record;
}

describe.each(attacks.items.map((a) => [a.id, a] as const))("attack %s", (id, attack) => {
  it("declares its taxonomy", () => {
    expect(id).toMatch(/^[a-z][a-z0-9_]*$/);
    expect(ACCESS).toContain(attack.access);
    expect(["baseline", "control", "treatment"]).toContain(attack.role);
    expect(attack.description.length).toBeGreaterThan(10);
    if (attack.role === "baseline") expect(attack.eai).toBeNull();
    else expect(attack.eai).toMatch(/^EAI\d\d$/);
    if (attack.role === "control") {
      expect(attack.matches, "a control names the attack it matches").toBeDefined();
      expect(attacks.get(attack.matches as string).role).toBe("treatment");
    }
  });

  it("parses its default params", () => {
    expect(() => attack.params.parse({})).not.toThrow();
  });

  it("runs one episode on the stub pair deterministically, or is N/A there for a declared reason", async () => {
    const reason = stubReason(id);
    if (NOT_APPLICABLE_ON_STUB.has(id)) {
      expect(reason, `${id} must be N/A on the stub pair`).not.toBeNull();
      const na = await episodeOnStub(id, 3, false);
      expect(na.termination).toBe("not_applicable");
      expect(na.unsafe).toBeNull();
      return;
    }
    expect(reason, `${id} must run on the stub pair`).toBeNull();
    const a = await episodeOnStub(id, 3);
    const b = await episodeOnStub(id, 3);
    expect(a.error).toBeNull();
    expect(a).toEqual(b);
    if (attack.role !== "baseline") {
      const p = a.perturbed;
      expect(
        p.inputs || p.actions || p.scene,
        "the perturbation reaches the policy or the simulator",
      ).toBe(true);
    }
  });

  it("has a docs entry", () => {
    const docs = readFileSync(join(import.meta.dirname, "..", "..", "docs", "attacks.md"), "utf8");
    expect(docs).toContain(`### \`${id}\``);
  });
});

describe("attack ids", () => {
  it("are unique and docs/attacks.md is generated from the registry", () => {
    expect(new Set(attacks.ids()).size).toBe(attacks.ids().length);
    const docs = readFileSync(join(import.meta.dirname, "..", "..", "docs", "attacks.md"), "utf8");
    expect(docs, "docs/attacks.md is stale: run `npm run docs`").toBe(renderAttackDocs());
  });
});
