import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { registerAttack } from "../cli/attack.js";
import { registerBridge } from "../cli/bridge.js";
import {
  addPlanFlags,
  type FlagValues,
  PLAN_FLAGS,
  type PlanCommand,
  planFlags,
  planFromFlags,
  RECIPE_FLAG_SHAPE,
  replayedFlags,
} from "./plan-flags.js";
import { recipeSchema } from "./recipes.js";

const ctx = { suiteTasks: ["fetch_cup"], calibrations: {}, servedPlan: {} };

/** The flag values commander parses for `command` from `argv`, through the table's options. */
function parsed(command: PlanCommand, argv: string[]): FlagValues {
  const cmd = addPlanFlags(new Command().exitOverride(), command);
  cmd.parse(argv, { from: "user" });
  return cmd.opts();
}

describe("the plan flag table", () => {
  it("parses --attack-param the same way for attack and bridge: 32/255 is a number", () => {
    for (const command of ["attack", "bridge"] as const) {
      const flags = parsed(command, [
        "--policy",
        "stub",
        "--attacks",
        "gradient_patch",
        "--attack-param",
        "gradient_patch.epsilon=32/255",
        "--attack-param",
        "gradient_patch.steps=3",
      ]);
      const plan = planFromFlags(command, flags, ctx);
      expect(plan.attack_params, command).toEqual({
        gradient_patch: { epsilon: 32 / 255, steps: 3 },
      });
    }
  });

  it("parses --defense-param the same way for attack and bridge (typed scalars, JSON objects)", () => {
    for (const command of ["attack", "bridge"] as const) {
      const flags = parsed(command, [
        "--policy",
        "stub",
        "--attacks",
        "none",
        "--defenses",
        "action_shield",
        "--defense-param",
        "action_shield.margin=0.03",
      ]);
      expect(planFromFlags(command, flags, ctx).defenses, command).toEqual({
        ids: ["action_shield"],
        compare: false,
        params: { action_shield: { margin: 0.03 } },
      });
    }
  });

  it("refuses a parameter for an arm the run does not play, in both commands", () => {
    for (const command of ["attack", "bridge"] as const) {
      const flags = parsed(command, [
        "--policy",
        "stub",
        "--attacks",
        "none",
        "--attack-param",
        "gradient_patch.epsilon=1",
      ]);
      expect(() => planFromFlags(command, flags, ctx), command).toThrow(
        /--attack-param names 'gradient_patch', which is not an arm of this run/,
      );
    }
  });

  it("is what `attack` and `bridge` declare: each table flag with the table's parser", () => {
    const program = new Command();
    registerAttack(program);
    registerBridge(program);
    for (const command of ["attack", "bridge"] as const) {
      const cmd = program.commands.find((c) => c.name() === command) as Command;
      for (const [key, f] of planFlags(command)) {
        const opt = cmd.options.find((o) => o.attributeName() === key);
        expect(opt?.flags, `${command} ${key}`).toBe(f.flag);
        expect(opt?.parseArg, `${command} ${key}`).toBe(f.parse);
      }
    }
  });

  it("gives the recipe schema its flag keys, and --from refuses what the report holds", () => {
    for (const key of Object.keys(RECIPE_FLAG_SHAPE))
      expect(recipeSchema.shape).toHaveProperty(key);
    expect(Object.keys(RECIPE_FLAG_SHAPE)).toEqual([
      "policy",
      "suite",
      "tasks",
      "attacks",
      "seed",
      "seeds",
      "repeats",
      "horizon",
      "termination",
      "concurrency",
    ]);
    const refused = replayedFlags("attack");
    expect(refused).toContain("scenePin");
    expect(refused).toContain("controls");
    expect(refused).not.toContain("policyPath");
    expect(refused).not.toContain("calib");
    for (const key of refused) expect(PLAN_FLAGS[key].replay).toBe("report");
  });
});
