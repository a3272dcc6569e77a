/** Every registered defense must satisfy the same contract, and play one episode on the stub pair. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { adaptiveAttacks, attacks } from "../../src/attacks/index.js";
import { defenseProblems } from "../../src/config/plugin-contract.js";
import { loadPlugins, pluginSource } from "../../src/config/plugins.js";
import { pluginKind } from "../../src/core/registry.js";
import { renderDefenseDocs } from "../../src/defenses/docs.js";
import { defenses, KIND_ORDER, resolveDefenses } from "../../src/defenses/index.js";
import { playEpisode } from "../../src/kernel/index.js";
import { policies } from "../../src/policies/index.js";
import { planCells } from "../../src/runner/plan.js";
import { suites } from "../../src/suites/index.js";
import { stubPlan } from "../support/stub-run.js";

/** Defenses the stub pair cannot serve (a stub policy exposes no weights), each for a reason. */
const NOT_ON_STUB: Record<string, string> = { weight_guard: "the stub policy exposes no weights" };

describe("every registered defense", () => {
  it("meets the static plugin contract and is branded", () => {
    for (const d of defenses.items) {
      expect(defenseProblems(d), d.id).toEqual([]);
      expect(pluginKind(d), d.id).toBe("defense");
      expect(KIND_ORDER).toContain(d.kind);
    }
  });

  it("has an adaptive attack declared against it, or is listed as never measured against one", () => {
    for (const a of attacks.items.filter((x) => x.adaptiveTo !== undefined))
      expect(defenses.has(a.adaptiveTo as string), a.id).toBe(true);
  });

  it("docs/defenses-catalog.md is generated from the registry", () => {
    const docs = readFileSync(join(import.meta.dirname, "../../docs/defenses-catalog.md"), "utf8");
    expect(docs, "docs/defenses-catalog.md is stale: run `npm run docs`").toBe(
      renderDefenseDocs(adaptiveAttacks()),
    );
  });

  it("resolves lists into loop order and refuses unknown names with the closest", () => {
    expect(resolveDefenses(["envelope_monitor", "action_shield", "instruction_filter"])).toEqual([
      "instruction_filter",
      "action_shield",
      "envelope_monitor",
    ]);
    expect(() => resolveDefenses(["action_shild"])).toThrow(/did you mean 'action_shield'/);
    expect(() => resolveDefenses([])).toThrow(/empty/);
  });

  it("a defense plugin (examples/plugins/speed-limit-defense.mjs) loads, registers and plays", async () => {
    const file = join(import.meta.dirname, "../../examples/plugins/speed-limit-defense.mjs");
    const [record] = await loadPlugins([pluginSource(file)]);
    expect(record?.provides).toEqual([{ kind: "defense", id: "speed_limit" }]);
    expect(defenses.has("speed_limit")).toBe(true);
    const hooks = await defenses.get("speed_limit").begin({ params: { max: 0.5 } } as never);
    const out = hooks.actuate?.(Float32Array.of(1, 0, 0, 0.2, 0, 0, 1), 0, {}) as Float32Array;
    expect(out[0]).toBeCloseTo(0.5);
    expect(out[3]).toBeCloseTo(0.2);
  });

  const suite = suites.get("stub");
  const task = suite.tasks()[0] as ReturnType<typeof suite.tasks>[number];
  for (const d of defenses.items) {
    if (NOT_ON_STUB[d.id]) continue;
    it(`${d.id}: one defended episode on the stub pair records its defenses and interventions`, async () => {
      const plan = stubPlan({
        tasks: [task.id],
        arms: ["none"],
        seeds: 1,
        defenses: { ids: [d.id], compare: false, params: {} },
      });
      const cell = planCells(plan)[0];
      if (!cell) throw new Error("no cell");
      expect(cell.defenses).toEqual([d.id]);
      const instance = await suite.open();
      const policy = await policies.get("stub").load({});
      const { record } = await playEpisode(cell, {
        plan,
        suite,
        instance,
        policy,
        attack: attacks.get("none"),
        applicable: true,
        task,
        predicates: suite.predicates(task.id),
      });
      expect(record.error).toBeNull();
      expect(record.defenses).toEqual([d.id]);
      expect(record.interventions?.[d.id]).toBeDefined();
      // A benign episode on the stub pair is not stopped by any shipped defense's defaults.
      expect(record.stop).toBeNull();
      expect(record.termination).not.toBe("stop");
    });
  }
});
