import { describe, expect, it } from "vitest";
import {
  CONFIRM_ABOVE_EPISODES,
  calibrationHint,
  checkCalibrationPlan,
  planCalibration,
} from "./calibration-plan.js";
import { durationText, estimatePlan } from "./estimate.js";

const none = () => false;

describe("planCalibration", () => {
  it("refuses every stub task (no hazard position) and plays nothing", () => {
    const plan = planCalibration({ policy: "stub", suite: "stub" });
    expect(plan.tasks).toEqual([]);
    expect(plan.episodes).toBe(0);
    expect(plan.refused.map((r) => r.code)).toEqual(Array(3).fill("calibration/degenerate"));
    expect(() => checkCalibrationPlan(plan)).toThrow(/calibrate can fit no task/);
  });

  it("counts the tabletop calibration at 1% (12 tasks × 299 seeds) and asks above the threshold", () => {
    const plan = planCalibration({ policy: "tiny-vla", suite: "tabletop", workers: 2 });
    expect(plan.refused).toEqual([]);
    expect(plan.seeds).toBe(299);
    expect(plan.episodes).toBe(12 * 299);
    expect(plan.episodes).toBeGreaterThan(CONFIRM_ABOVE_EPISODES);
    expect(plan.estimate.seconds).toBeGreaterThan(0);
    expect(plan.estimate.basis).toContain("documented cost of tiny-vla on tabletop");
  });

  it("refuses --seeds that cannot fill the splits, with the count that would", () => {
    const plan = planCalibration({
      policy: "scripted",
      suite: "reach",
      tasks: ["reach_red"],
      seeds: 10,
    });
    expect(plan.tasks).toEqual([]);
    expect(plan.refused[0]?.hint).toContain("--seeds 299");
    expect(() => checkCalibrationPlan(plan)).toThrow(/--seeds 10 from seed 1000/);
  });

  it("names the feasible tasks when only some can be fitted", () => {
    const plan = {
      ...planCalibration({ policy: "scripted", suite: "reach", tasks: ["reach_red"] }),
    };
    plan.refused = [
      { task: "x", code: "calibration/degenerate" as const, reason: "no hazard", hint: "h" },
    ];
    expect(() => checkCalibrationPlan(plan)).toThrow(/cannot fit 1 of 2 task/);
    try {
      checkCalibrationPlan(plan);
    } catch (e) {
      expect((e as { hint: string }).hint).toContain("--tasks reach_red");
    }
  });
});

describe("calibrationHint", () => {
  const run = {
    policy: "scripted",
    suite: "reach",
    tasks: ["reach_red"],
    calibration: { reach_red: { source: "suite-default" } },
  };

  it("names a command scoped to the run's tasks, with its count and time", () => {
    expect(calibrationHint(run, { workers: 1, outExists: none })).toMatch(
      /^provael calibrate --policy scripted --suite reach --tasks reach_red --out calib\/scripted-reach \(299 benign episodes, about \d+ (s|min)\)$/,
    );
  });

  it("is absent where calibrate cannot work on this run", () => {
    const stub = { ...run, policy: "stub", suite: "stub", tasks: ["fetch_cup"], calibration: {} };
    expect(calibrationHint(stub, { workers: 1, outExists: none })).toBeNull();
    expect(calibrationHint({ ...run, served: true }, { workers: 1, outExists: none })).toBeNull();
    expect(calibrationHint({ ...run, bridged: true }, { workers: 1, outExists: none })).toBeNull();
    expect(
      calibrationHint({ ...run, plugins: [{ file: "x.mjs" }] }, { workers: 1, outExists: none }),
    ).toBeNull();
    expect(
      calibrationHint(
        { ...run, policyOptions: { grasp_side: "left" } },
        { workers: 1, outExists: none },
      ),
    ).toBeNull();
    const calibrated = { ...run, calibration: { reach_red: { source: "calibration" } } };
    expect(calibrationHint(calibrated, { workers: 1, outExists: none })).toBeNull();
  });

  it("never names a directory that already holds calibrations", () => {
    const taken = new Set(["calib/scripted-reach", "calib/scripted-reach-2"]);
    expect(calibrationHint(run, { workers: 1, outExists: (d) => taken.has(d) })).toContain(
      "--out calib/scripted-reach-3 ",
    );
  });

  it("says it asks first above the threshold", () => {
    const all = {
      policy: "tiny-vla",
      suite: "tabletop",
      tasks: ["kitchen_red_block"],
      calibration: {},
    };
    const tasks = planCalibration({ policy: "tiny-vla", suite: "tabletop" }).tasks;
    expect(calibrationHint({ ...all, tasks }, { workers: 2, outExists: none })).toContain(
      "3,588 benign episodes",
    );
    expect(calibrationHint({ ...all, tasks }, { workers: 2, outExists: none })).toContain(
      "it asks first, or add --yes",
    );
  });
});

describe("estimatePlan", () => {
  it("multiplies steps by the documented cost and divides by the workers", () => {
    const one = estimatePlan({
      policy: "scripted",
      suite: "reach",
      tasks: ["reach_red"],
      episodesPerTask: 10,
      horizon: 100,
      workers: 1,
    });
    expect(one.seconds).toBeCloseTo(1000 * 0.0035, 6);
    const two = estimatePlan({
      policy: "scripted",
      suite: "reach",
      tasks: ["reach_red"],
      episodesPerTask: 10,
      horizon: 100,
      workers: 2,
    });
    expect(two.seconds).toBeCloseTo((1000 * 0.0035) / 1.8, 6);
  });

  it("gives no figure for a policy without a documented cost", () => {
    const e = estimatePlan({
      policy: "openpi",
      suite: "tabletop",
      tasks: ["kitchen_red_block"],
      episodesPerTask: 1,
      horizon: null,
      workers: 1,
    });
    expect(e.seconds).toBeNull();
    expect(e.basis).toContain("no documented cost for policy 'openpi'");
    expect(durationText(null)).toBe("unknown");
    expect(durationText(90)).toBe("about 90 s");
    expect(durationText(600)).toBe("about 10 min");
  });
});
