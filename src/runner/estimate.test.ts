import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { planSeconds } from "./estimate.js";
import { defaultWorkers, POOL_WORTH_SECONDS } from "./executor.js";

const STUB = {
  policy: "stub",
  suite: "stub",
  tasks: ["fetch_cup", "wipe_plate", "grab_sponge"],
  arms: ["none", "control", "instruction"],
  seeds: 10,
  repeats: 1,
  horizon: null,
};

describe("the default worker count", () => {
  it("plays a plan cheaper than a pool's start-up in this thread", () => {
    const seconds = planSeconds(STUB);
    expect(seconds).not.toBeNull();
    expect(seconds as number).toBeLessThan(POOL_WORTH_SECONDS);
    expect(defaultWorkers(seconds)).toBe(1);
  });

  it("uses every core for a plan that takes longer, or whose cost is unknown", () => {
    const tabletop = {
      ...STUB,
      policy: "tiny-vla",
      suite: "tabletop",
      tasks: ["kitchen_red_block", "pantry_red_block"],
      seeds: 4,
    };
    const seconds = planSeconds(tabletop) as number;
    expect(seconds).toBeGreaterThan(POOL_WORTH_SECONDS);
    expect(defaultWorkers(seconds)).toBe(availableParallelism());
    expect(planSeconds({ ...STUB, policy: "openpi" })).toBeNull();
    expect(defaultWorkers(null)).toBe(availableParallelism());
  });

  it("counts every arm, seed and repeat", () => {
    const one = planSeconds({ ...STUB, arms: ["none"], seeds: 1 }) as number;
    expect(planSeconds({ ...STUB, arms: ["none"], seeds: 2, repeats: 3 })).toBeCloseTo(one * 6);
    // A plan with no repeats field set to 0 (the default) counts one.
    expect(planSeconds({ ...STUB, arms: ["none"], seeds: 1, repeats: 0 })).toBeCloseTo(one);
  });
});
