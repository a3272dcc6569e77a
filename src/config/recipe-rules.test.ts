import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { addPlanFlags } from "./plan-flags.js";
import { applyRecipe, attackFlagDefaults, RECIPES } from "./recipe-rules.js";

const quick = RECIPES.find((r) => r.name === "quick");

describe("recipe rules", () => {
  it("the flag defaults are what commander gives `attack` with no flag", () => {
    const cmd = addPlanFlags(new Command("attack"), "attack").exitOverride();
    cmd.parse([], { from: "user" });
    expect(attackFlagDefaults()).toEqual(cmd.opts());
  });

  it("a recipe sets what no flag named; its per-suite set applies only with neither --attacks nor --tasks", () => {
    if (!quick) throw new Error("no quick recipe");
    const none = applyRecipe(attackFlagDefaults(), quick, () => false);
    expect(none.flags.attacks).toEqual(quick.suites?.tabletop?.attacks);
    expect(none.note).toBeNull();
    const tasks = applyRecipe(
      { ...attackFlagDefaults(), tasks: ["t"] } as Record<string, unknown>,
      quick,
      (k) => k === "tasks",
    );
    expect(tasks.flags.attacks).toEqual(quick.attacks);
    expect(tasks.note).toMatch(/--tasks without --attacks/);
    const named = applyRecipe(
      { ...attackFlagDefaults(), attacks: ["none"], seeds: 2 },
      quick,
      (k) => k === "attacks" || k === "seeds",
    );
    expect(named.flags).toMatchObject({ attacks: ["none"], seeds: 2 });
  });
});
