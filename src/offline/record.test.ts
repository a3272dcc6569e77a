import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../test/support/tmp.js";
import { stubPolicy } from "../policies/stub.js";
import { stubSuite } from "../suites/stub.js";
import { openDataset, validateDataset } from "./lerobot.js";
import { recordDemonstrations } from "./record.js";
import { buildTrainingSet } from "./training-data.js";

describe("recording demonstrations", () => {
  it("keeps successful episodes of the given scenes and writes a valid dataset", async () => {
    const out = join(tempDir(), "demos");
    const r = await recordDemonstrations({
      suite: stubSuite,
      policy: stubPolicy,
      tasks: stubSuite
        .tasks()
        .slice(0, 2)
        .map((t) => t.id),
      scenes: [1, 3],
      episodes: 4,
      seed: 5,
      out,
    });
    expect(r.kept).toBe(4);
    expect(r.info.codebase_version).toBe("v3.0");
    expect(
      Object.values(r.scenes)
        .flat()
        .every((s) => s >= 1 && s < 3),
    ).toBe(true);
    expect(await validateDataset(out)).toMatchObject({ valid: true, episodes: 4 });
    const ds = await openDataset(out);
    expect(ds.episodes.map((e) => e.scene)).toEqual([1, 1, 2, 2]);
    expect(ds.episodes.every((e) => e.seed === 5)).toBe(true);
    expect(ds.cameras).toEqual(["agentview"]);

    // Chunks: the next 4 actions, the episode's last action repeated past its end.
    const built = await buildTrainingSet([ds], {
      imageSize: 4,
      chunk: 4,
      maxTokens: 8,
      cameras: ["agentview"],
      stateFeatures: "raw",
    });
    const ep = await ds.episode(0, { images: false });
    const T = ep.frames.length;
    expect(built.set.count).toBe(ds.info.total_frames);
    const A = 7;
    const last = Array.from(ep.frames[T - 1]?.action ?? []);
    const chunkOfLast = Array.from(built.set.targets.subarray((T - 1) * 4 * A, T * 4 * A));
    expect(chunkOfLast).toEqual([...last, ...last, ...last, ...last]);
    expect(Array.from(built.set.targets.subarray(0, A))).toEqual(
      Array.from(ep.frames[0]?.action ?? []),
    );
    expect(built.tokenizer.vocabulary).toContain("cup");
    expect(built.stats.actionScale.every((s) => s >= 0.05)).toBe(true);
  });

  it("refuses a scene range no task has", async () => {
    await expect(
      recordDemonstrations({
        suite: stubSuite,
        policy: stubPolicy,
        scenes: [500, 501],
        episodes: 1,
        seed: 0,
        out: join(tempDir(), "x"),
      }),
    ).rejects.toThrow(/no task has scenes/);
  });
});
