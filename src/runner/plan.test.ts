import { describe, expect, it } from "vitest";
import { cellId, type PlanSpec, planCells, planDifferences, validatePlan } from "./plan.js";

const spec: PlanSpec = {
  policy: "stub",
  suite: "stub",
  tasks: ["a", "b"],
  arms: ["none", "roleplay"],
  seed: 5,
  seeds: 3,
  repeats: 2,
  horizon: null,
  termination: "fixed-horizon",
  scene_pin: 0,
  policy_options: {},
  attack_params: {},
  calibration: {},
};

describe("plan", () => {
  it("enumerates tasks × arms × seeds × repeats with stable, unique ids", () => {
    const cells = planCells(spec);
    expect(cells).toHaveLength(2 * 2 * 3 * 2);
    expect(new Set(cells.map((c) => c.id)).size).toBe(cells.length);
    expect(cells[0]).toEqual({
      id: cellId("a", "none", 5, 0),
      task: "a",
      arm: "none",
      seed: 5,
      repeat: 0,
    });
    expect(cellId("a", "none", 5, 0)).toMatchInlineSnapshot(`"c0c5bab49d516990940c6"`);
  });

  it("names the fields that differ", () => {
    expect(planDifferences(spec, { ...spec, seeds: 4 })).toEqual(["seeds: 3 vs 4"]);
  });

  it("rejects bad numbers and unknown tasks", () => {
    expect(() => validatePlan({ ...spec, seeds: 0 }, ["a", "b"])).toThrow(
      /--seeds must be a positive integer/,
    );
    expect(() => validatePlan({ ...spec, horizon: -1 }, ["a", "b"])).toThrow(/--horizon/);
    expect(() => validatePlan({ ...spec, tasks: ["c"] }, ["a", "b"])).toThrow(/unknown task 'c'/);
  });
});
