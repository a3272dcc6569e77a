/**
 * The generated scenes are the scenes that were stored: a sample of every task's scenes 0-99
 * (all of them are checked by `node test/golden/scenes/generate.mjs`, which reads the stored
 * files from git) and a few later indices, by digest.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { digestJson } from "../../../src/core/digest.js";
import { reachScenes } from "../../../src/suites/mujoco/reach.js";
import type { SceneSource } from "../../../src/suites/mujoco/scenes.js";
import { tabletopScenes } from "../../../src/suites/mujoco/tabletop.js";

interface Golden {
  suites: Record<string, Record<string, { stored: string[]; later: Record<string, string> }>>;
}
const golden = JSON.parse(
  readFileSync(join(import.meta.dirname, "digests.json"), "utf8"),
) as Golden;
const SAMPLE = [0, 19, 20, 57, 99];

describe.each([
  ["tabletop", tabletopScenes],
  ["reach", reachScenes],
] as [string, () => SceneSource][])("%s scenes", (suite, make) => {
  it("regenerates the stored scenes and the frozen later ones, by digest", async () => {
    const source = make();
    const tasks = golden.suites[suite] ?? {};
    expect(Object.keys(tasks).length).toBeGreaterThan(0);
    try {
      for (const [task, g] of Object.entries(tasks)) {
        expect(g.stored).toHaveLength(100);
        for (const i of SAMPLE) {
          expect(digestJson(await source.placement(task, i)), `${task} #${i}`).toBe(g.stored[i]);
        }
        for (const [i, d] of Object.entries(g.later)) {
          expect(digestJson(await source.placement(task, Number(i))), `${task} #${i}`).toBe(d);
        }
      }
    } finally {
      await source.close();
    }
  }, 60_000);
});
