/**
 * A plan is tasks × arms × seeds × repeats. Cells have stable ids (a digest of their fields), so
 * a cell means the same thing in every process, shard and resume.
 */
import { ProvaelError } from "../core/errors.js";
import { unknownName } from "../core/registry.js";

export type { Cell, DefensePlan, PlanSpec, Termination, Waiver } from "../core/plan.js";
export { planDifferences, planDigest, WAIVERS } from "../core/plan.js";

import { type Cell, type PlanSpec, planSchema, WAIVERS } from "../core/plan.js";
import { describeIssues } from "../core/zod-issues.js";
import { cellId } from "../kernel/index.js";

export { cellId };

/** Whether a journalled record says it is this cell (its id alone could be another's). */
export function isRecordOf(
  cell: Cell,
  r: { task: string; arm: string; seed: number; repeat: number; defenses?: readonly string[] },
): boolean {
  return (
    cell.task === r.task &&
    cell.arm === r.arm &&
    cell.seed === r.seed &&
    cell.repeat === r.repeat &&
    (cell.defenses ?? []).join(",") === (r.defenses ?? []).join(",")
  );
}

/** The defense sets a plan plays each cell with: [] is undefended. */
export function defenseConditions(spec: PlanSpec): string[][] {
  const d = spec.defenses;
  if (!d || d.ids.length === 0) return [[]];
  return d.compare ? [[], d.ids] : [d.ids];
}

/** Cells in canonical order: task, then arm, then seed, then repeat, undefended before defended. */
export function planCells(spec: PlanSpec): Cell[] {
  const cells: Cell[] = [];
  for (const task of spec.tasks) {
    for (const arm of spec.arms) {
      for (let s = 0; s < spec.seeds; s++) {
        for (let r = 0; r < spec.repeats; r++) {
          const seed = spec.seed + s;
          for (const defenses of defenseConditions(spec)) {
            cells.push({
              id: cellId(task, arm, seed, r, defenses),
              task,
              arm,
              seed,
              repeat: r,
              ...(defenses.length > 0 ? { defenses } : {}),
            });
          }
        }
      }
    }
  }
  return cells;
}

/** Checks the numeric fields of a plan and the task list against the suite's tasks. */
export function validatePlan(spec: PlanSpec, suiteTasks: string[]): void {
  // A plan built in code (the library API) is checked against the schema the journal holds it to.
  const shape = planSchema.safeParse(spec);
  if (!shape.success) {
    throw new ProvaelError(
      "config/invalid",
      `the plan is not valid: ${describeIssues(shape.error, "plan")}`,
      {
        hint: "plan fields are written as the journal and report.json write them: scene_pin, policy_options, attack_params",
      },
    );
  }
  const positive = (name: string, v: number | null) => {
    if (v !== null && (!Number.isInteger(v) || v < 1)) {
      throw new ProvaelError("config/invalid", `--${name} must be a positive integer, got ${v}`, {
        details: { field: name, value: v },
        hint: `pass --${name} 1 or more`,
      });
    }
  };
  positive("seeds", spec.seeds);
  positive("repeats", spec.repeats);
  positive("horizon", spec.horizon);
  if (!Number.isInteger(spec.seed) || spec.seed < 0) {
    throw new ProvaelError(
      "config/invalid",
      `--seed must be a non-negative integer, got ${spec.seed}`,
      {
        hint: "pass --seed 0 or more",
      },
    );
  }
  if (!Number.isInteger(spec.scene_pin) || spec.scene_pin < 0) {
    throw new ProvaelError(
      "config/invalid",
      `--scene-pin must be a non-negative integer, got ${spec.scene_pin}`,
    );
  }
  if (spec.tasks.length === 0) {
    throw new ProvaelError("config/invalid", "the task list is empty", {
      hint: "omit --tasks to run every task",
    });
  }
  for (const t of spec.tasks) {
    if (!suiteTasks.includes(t)) {
      throw unknownName(
        "task",
        t,
        suiteTasks,
        "provael list-suites",
        "config/unknown-task",
        ` in suite '${spec.suite}'`,
      );
    }
  }
  for (const w of spec.waivers ?? []) {
    if (!WAIVERS.includes(w)) throw new ProvaelError("config/invalid", `unknown waiver '${w}'`);
  }
  if (new Set(spec.tasks).size !== spec.tasks.length) {
    throw new ProvaelError("config/invalid", "a task is listed twice in --tasks");
  }
}
