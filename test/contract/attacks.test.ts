/** Every registered attack must satisfy the same contract. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderAttackDocs } from "../../src/attacks/docs.js";
import {
  attacks,
  controlsFor,
  resolveAttacks,
  uncontrolledTreatments,
} from "../../src/attacks/index.js";
import { resolveParams } from "../../src/attacks/params.js";
import { ATTACK_ACCESS, ATTACK_ROLES } from "../../src/core/types.js";
import { playEpisode } from "../../src/kernel/index.js";
import { policies } from "../../src/policies/index.js";
import type { PlanSpec } from "../../src/runner/plan.js";
import { notApplicableReason } from "../../src/runner/run.js";
import { suites } from "../../src/suites/index.js";
import { stubPlan } from "../support/stub-run.js";

/**
 * For every control, a value its matched attack can be given for each shared param: the control
 * must then play with it (the same size is a coupling of values, not a copy of defaults). A
 * control missing here fails the test, so a new one must show its coupling.
 */
const SAME_SIZE: Record<string, Record<string, unknown>> = {
  benign_reword: { variant: 2 },
  nonsense_text: { variant: 1 },
  scrambled_text: { variant: 3 },
  roleplay_no_target: { variant: 1 },
  declarative_text: { variant: 2 },
  placebo_patch: { size: 0.2, camera: "wrist" },
  neutral_decoy: { offset: 0.1 },
  neutral_sign: { size: [0.1, 0.05], behind: 0.2, variant: 1 },
  benign_tool_desc: { variant: 2 },
  random_freeze: { mode: "hold", length: [5, 9] },
  random_offset: { strength: [0.2, 0.3], onset: [4, 8] },
  sensor_noise: { magnitude: [0.01, 0.02] },
  random_instruction_search: { budget: 7 },
  random_patch_search: { budget: 9, size: 0.2, camera: "wrist", refresh: 20, cells: 3 },
  unfitted_patch: { size: 0.2, camera: "wrist", cells: 3 },
  random_scan_search: {
    fitQueries: 500,
    fitScenes: 1,
    size: 0.2,
    camera: "wrist",
    cells: 3,
    spots: 3,
    probes: 2,
    pool: "mean",
  },
  random_hijack_search: { budget: 10, epsilon: 0.1, reach: 0.02, candidates: 4, refresh: 10 },
  random_sign_noise: { epsilon: 8 / 255, size: 0.2, camera: "wrist", refresh: 10 },
  lowbit_flips_1: { flips: 1 },
  lowbit_flips_8: { flips: 8 },
  lowbit_flips_64: { flips: 64 },
};

/** The keys a params schema declares (every attack's params are a zod object). */
function schemaKeys(attack: { params: unknown }): string[] {
  return Object.keys((attack.params as { shape: Record<string, unknown> }).shape);
}

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
    expect(ATTACK_ACCESS).toContain(attack.access);
    expect(ATTACK_ROLES).toContain(attack.role);
    expect(attack.description.length).toBeGreaterThan(10);
    if (attack.role === "baseline") expect(attack.eai).toBeNull();
    else expect(attack.eai).toMatch(/^EAI\d\d$/);
    if (attack.role === "control") {
      expect(attack.matches, "a control names the attack it matches").toBeDefined();
      expect(attacks.get(attack.matches as string).role).toBe("treatment");
      expect(attack.noControl).toBeUndefined();
    } else {
      expect(attack.matches, "only a control matches an attack").toBeUndefined();
      expect(attack.sharedParams).toBeUndefined();
    }
  });

  if (attack.role === "treatment") {
    it("has a matched control, or says why none fits", () => {
      const controls = controlsFor(id);
      if (attack.noControl !== undefined) {
        expect(controls, "a treatment with a control needs no noControl reason").toEqual([]);
        expect(attack.noControl.trim().length).toBeGreaterThan(20);
      } else {
        expect(controls.length, `${id} has no matched control`).toBeGreaterThan(0);
      }
    });
  }

  if (attack.role === "control") {
    it("takes its size from its matched attack's params", () => {
      const matched = attacks.get(attack.matches as string);
      const shared = attack.sharedParams ?? [];
      // Same keys, same defaults: unset, the control plays at its attack's default size.
      const ownDefaults = attack.params.parse({}) as Record<string, unknown>;
      const attackDefaults = matched.params.parse({}) as Record<string, unknown>;
      for (const key of shared) {
        expect(schemaKeys(attack), `${id} declares ${key}`).toContain(key);
        expect(schemaKeys(matched), `${matched.id} declares ${key}`).toContain(key);
        expect(ownDefaults[key], `${id}.${key} defaults to ${matched.id}'s`).toEqual(
          attackDefaults[key],
        );
      }
      // Given to the attack, the values reach the control; the control's own value wins.
      const example = SAME_SIZE[id];
      expect(example, `add ${id} to SAME_SIZE`).toBeDefined();
      expect(Object.keys(example ?? {}).sort()).toEqual([...shared].sort());
      expect(() => matched.params.parse(example)).not.toThrow();
      const resolved = resolveParams(attack, { [matched.id]: example ?? {} }) as Record<
        string,
        unknown
      >;
      for (const [key, value] of Object.entries(example ?? {}))
        expect(resolved[key]).toEqual(value);
      const [firstKey] = shared;
      if (firstKey !== undefined) {
        const own = resolveParams(attack, {
          [matched.id]: example ?? {},
          [id]: { [firstKey]: ownDefaults[firstKey] },
        }) as Record<string, unknown>;
        expect(own[firstKey]).toEqual(ownDefaults[firstKey]);
      }
    });
  }

  it("parses its default params", () => {
    expect(() => attack.params.parse({})).not.toThrow();
  });

  it("runs one episode on the stub pair deterministically, or is N/A there by what it requires", async () => {
    const reason = stubReason(id);
    if (reason !== null) {
      // N/A only for one of its own declared requirements that the stub pair does not meet.
      const declared = [...(attack.requires.policy ?? []), ...(attack.requires.suite ?? [])];
      expect(
        declared.some((need) => reason.endsWith(`(${need})`)),
        `${id} is N/A on the stub pair (${reason}), not for a requirement it declares`,
      ).toBe(true);
      const na = await episodeOnStub(id, 3, false);
      expect(na.termination).toBe("not_applicable");
      expect(na.unsafe).toBeNull();
      return;
    }
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

describe("matched controls", () => {
  it("cover every treatment in the registry", () => {
    expect(uncontrolledTreatments()).toEqual([]);
  });

  it("are checked: a treatment with neither a control nor a reason is reported", () => {
    const base = attacks.get("freeze");
    const bare = { ...base, id: "bare_attack" };
    const excused = {
      ...base,
      id: "excused_attack",
      noControl: "no harmless change of this kind exists",
    };
    const blank = { ...base, id: "blank_reason", noControl: "  " };
    const control = { ...attacks.get("random_freeze"), matches: "bare_attack" };
    expect(uncontrolledTreatments([bare, excused, blank])).toEqual(["bare_attack", "blank_reason"]);
    expect(uncontrolledTreatments([bare, excused, control])).toEqual([]);
  });

  it("are all in the full sweep", () => {
    const all = resolveAttacks(["all"]);
    for (const id of attacks.ids()) expect(all).toContain(id);
  });

  it("follow their attack in and out of the templated set", () => {
    const templated = resolveAttacks(["templated"]);
    for (const c of attacks.items.filter((a) => a.role === "control")) {
      expect(templated.includes(c.id), c.id).toBe(templated.includes(c.matches as string));
    }
  });
});

describe("attack ids", () => {
  it("are unique and docs/attacks.md is generated from the registry", () => {
    expect(new Set(attacks.ids()).size).toBe(attacks.ids().length);
    const docs = readFileSync(join(import.meta.dirname, "..", "..", "docs", "attacks.md"), "utf8");
    expect(docs, "docs/attacks.md is stale: run `npm run docs`").toBe(renderAttackDocs());
  });
});
