import { describe, expect, it } from "vitest";
import { declaredScenes } from "../policies/tiny-vla/weights.js";
import type { Dataset } from "./lerobot.js";
import { trainedScenes, unionScenes } from "./trained-scenes.js";

/** Only what trainedScenes reads: each episode's task and scene. */
const data = (episodes: [string, number][]): Dataset =>
  ({
    episodes: episodes.map(([suiteTask, scene]) => ({ suiteTask, scene })),
  }) as unknown as Dataset;

describe("the scenes a training saw", () => {
  it("declares each task's demonstration scenes as ranges, tasks with the same ranges together", () => {
    const d = data([
      ["kitchen_red_block", 21],
      ["kitchen_red_block", 20],
      ["kitchen_red_block", 22],
      ["kitchen_red_block", 40],
      ["pantry_orange_cup", 20],
      ["pantry_orange_cup", 21],
      ["pantry_orange_cup", 22],
      ["pantry_orange_cup", 40],
      ["kitchen_blue_ball", 30],
      ["not_a_tabletop_task", 5],
    ]);
    expect(trainedScenes([d])).toEqual([
      {
        suite: "tabletop",
        tasks: ["kitchen_red_block", "pantry_orange_cup"],
        scenes: [
          [20, 23],
          [40, 41],
        ],
      },
      { suite: "tabletop", tasks: ["kitchen_blue_ball"], scenes: [[30, 31]] },
    ]);
  });

  it("adds the locator's range for every task the data names, clipped to the task's scenes", () => {
    const d = data([
      ["kitchen_red_block", 20],
      ["pantry_orange_cup", 5],
    ]);
    expect(trainedScenes([d], [20, 400])).toEqual([
      { suite: "tabletop", tasks: ["kitchen_red_block"], scenes: [[20, 400]] },
      {
        suite: "tabletop",
        tasks: ["pantry_orange_cup"],
        scenes: [
          [5, 6],
          [20, 400],
        ],
      },
    ]);
    expect(trainedScenes([d], [9_990, 20_000])[0]?.scenes).toEqual([
      [20, 21],
      [9_990, 10_000],
    ]);
  });

  it("joins two declarations per task (a fine-tune and its initial model, a join's two halves)", () => {
    const a = [
      { suite: "tabletop", tasks: "*" as const, scenes: [[20, 100]] as [number, number][] },
    ];
    const b = trainedScenes([data([["kitchen_red_block", 100]])], [100, 110]);
    const joined = unionScenes(a, b);
    expect(joined.find((x) => x.tasks.includes("kitchen_red_block"))?.scenes).toEqual([[20, 110]]);
    expect(joined.find((x) => x.tasks.includes("pantry_orange_cup"))?.scenes).toEqual([[20, 100]]);
    expect(joined.reduce((n, x) => n + (x.tasks as string[]).length, 0)).toBe(12);
  });

  it("reads a manifest's declaration back, and nothing from a malformed one", () => {
    const ok = trainedScenes([data([["kitchen_red_block", 3]])]);
    expect(declaredScenes({ scenes: JSON.parse(JSON.stringify(ok)) })).toEqual(ok);
    expect(declaredScenes({})).toBeUndefined();
    expect(
      declaredScenes({ scenes: [{ suite: "tabletop", tasks: "*", scenes: [[3]] }] }),
    ).toBeUndefined();
    expect(
      declaredScenes({ scenes: [{ suite: "tabletop", tasks: [1], scenes: [] }] }),
    ).toBeUndefined();
  });
});
