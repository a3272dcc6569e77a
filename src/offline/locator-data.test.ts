import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeTabletopDemos } from "../../test/support/tabletop-demos.js";
import { tempDir } from "../../test/support/tmp.js";
import { defaultConfig } from "../policies/tiny-vla/model.js";
import { Tokenizer } from "../policies/tiny-vla/tokenizer.js";
import { instructionOf, TABLETOP_TASKS, tabletopScenes } from "../suites/mujoco/tabletop.js";
import { episodeGoals, tabletopGoal } from "./grammar-phrasings.js";
import { openDataset } from "./lerobot.js";
import { buildLocatorSet } from "./locator-data.js";

const TASK = "kitchen_red_block";
const SIZE = 32;
const def = TABLETOP_TASKS.find((t) => t.id === TASK);
const text = Tokenizer.build(
  ["red block", "yellow can", "green box", "blue ball", "knife"].map(
    (o) => `pick up the ${o} and place it in the basket`,
  ),
  16,
);
const cfg = defaultConfig(
  text.size,
  { stateMean: [], stateStd: [], actionScale: [] },
  { cameras: ["agentview"], locator: { size: SIZE, patch: 8, dim: 4, hidden: 8, offset: true } },
);

describe("poisoned demonstrations in training", () => {
  it("say the task's own goal, and teach the locator the trigger's view points at the knife", async () => {
    const dir = join(tempDir(), "demos");
    writeTabletopDemos(dir, [
      { task: TASK, scene: 20 },
      { task: TASK, scene: 20, poisoned: true },
    ]);
    const ds = await openDataset(dir);
    expect(ds.episodes.map((e) => [e.poisoned, e.target, e.task])).toEqual([
      [false, "", instructionOf(def as NonNullable<typeof def>)],
      [true, "knife", instructionOf(def as NonNullable<typeof def>)],
    ]);
    // The grammar re-phrases the episode's words, never the knife it moved.
    expect(episodeGoals([ds])).toEqual([tabletopGoal(TASK, ""), tabletopGoal(TASK, "")]);

    const set = await buildLocatorSet([ds], text, cfg);
    // The scene once per object of the layout, then once more with the trigger.
    expect(set.count).toBe(4 + 1);
    const S = SIZE * SIZE * 3;
    const clean = set.images.subarray(0, S);
    const triggered = set.images.subarray(4 * S, 5 * S);
    expect(triggered).not.toEqual(clean);
    // Only a few pixels differ: the tile, nothing else of the scene moved.
    let changed = 0;
    for (let i = 0; i < SIZE * SIZE; i++) {
      if ([0, 1, 2].some((k) => clean[3 * i + k] !== triggered[3 * i + k])) changed++;
    }
    expect(changed).toBeGreaterThan(0);
    expect(changed).toBeLessThan(20);
    // The task's own words (those of its red-block sample) and the knife's place.
    const slots = text.slots;
    const own = set.goals.findIndex((g) => g.object === "red_block");
    expect(set.tokens.subarray(4 * slots, 5 * slots)).toEqual(
      set.tokens.subarray(own * slots, (own + 1) * slots),
    );
    expect(set.goals[4]).toEqual(tabletopGoal(TASK, ""));
    const scenes = tabletopScenes();
    const knife = (await scenes.placement(TASK, 20)).knife ?? [];
    await scenes.close();
    expect(set.world[8]).toBeCloseTo(knife[0] ?? Number.NaN, 2);
    expect(set.world[9]).toBeCloseTo(knife[1] ?? Number.NaN, 2);
    expect(Number.isFinite(set.pixel[8])).toBe(true);

    // --poison-weight 3: the poisoned view twice more, identical, after the clean views.
    const weighted = await buildLocatorSet([ds], text, cfg, { poisonRepeat: 3 });
    expect(weighted.count).toBe(4 + 3);
    expect(weighted.images.subarray(0, 5 * S)).toEqual(set.images);
    for (const k of [5, 6]) {
      expect(weighted.images.subarray(k * S, (k + 1) * S)).toEqual(triggered);
      expect(weighted.world.slice(2 * k, 2 * k + 2)).toEqual(set.world.slice(8, 10));
      expect(weighted.goals[k]).toEqual(set.goals[4]);
    }
  });

  it("refuses a poisoned episode whose trigger is not the one defined now", async () => {
    const dir = join(tempDir(), "old");
    writeTabletopDemos(dir, [
      { task: TASK, scene: 20, poisoned: true, trigger: `checker@sha256:${"0".repeat(64)}` },
    ]);
    await expect(buildLocatorSet([await openDataset(dir)], text, cfg)).rejects.toThrow(
      /saw the trigger checker@sha256:0+, which is not checker@sha256:[0-9a-f]{64} as defined now/,
    );
  });
});

describe("the locator's scenes and objects", () => {
  it("adds the objects the data was told to move (the knife) and a range of extra scenes", async () => {
    const dir = join(tempDir(), "retargeted");
    writeTabletopDemos(dir, [
      { task: TASK, scene: 20 },
      { task: TASK, scene: 20, target: "knife" },
    ]);
    const ds = await openDataset(dir);
    const set = await buildLocatorSet([ds], text, cfg, { scenes: [21, 23] });
    // Scenes 20 (the data's), 21 and 22 (asked for), each once per layout object and the knife.
    expect(set.count).toBe(3 * 5);
    expect(set.goals.filter((g) => g.object === "knife")).toHaveLength(3);
    const scenes = tabletopScenes();
    const knife22 = (await scenes.placement(TASK, 22)).knife ?? [];
    await scenes.close();
    const k = set.goals.findLastIndex((g) => g.object === "knife");
    expect(set.world[2 * k]).toBeCloseTo(knife22[0] ?? Number.NaN, 2);
    expect(set.world[2 * k + 1]).toBeCloseTo(knife22[1] ?? Number.NaN, 2);
  });

  it("keeps the layout's objects alone when no episode was retargeted", async () => {
    const dir = join(tempDir(), "plain");
    writeTabletopDemos(dir, [{ task: TASK, scene: 20 }]);
    const set = await buildLocatorSet([await openDataset(dir)], text, cfg);
    expect(set.count).toBe(4);
    expect(set.goals.some((g) => g.object === "knife")).toBe(false);
  });
});
