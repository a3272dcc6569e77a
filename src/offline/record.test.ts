import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../test/support/tmp.js";
import { scriptedPolicy } from "../policies/scripted.js";
import { stubPolicy } from "../policies/stub.js";
import { createTabletopSuite } from "../suites/mujoco/tabletop.js";
import { stubSuite } from "../suites/stub.js";
import { openDataset, validateDataset } from "./lerobot.js";
import { recordDemonstrations } from "./record.js";
import { buildTrainingSet, loadTrainingSet, saveTrainingSet } from "./training-data.js";

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
    expect(built.text.kind).toBe("words");
    expect(built.text.unknown("cup")).toEqual([]);
    expect(built.stats.actionScale.every((s) => s >= 0.05)).toBe(true);

    // Subword units: rows of maxWords x perWord ids, and the cache keeps which units they are.
    const subword = { buckets: 256, minN: 3, maxN: 5, maxWords: 6, perWord: 8 };
    const sub = await buildTrainingSet([ds], {
      imageSize: 4,
      chunk: 4,
      maxTokens: 8,
      subword,
      cameras: ["agentview"],
      stateFeatures: "raw",
    });
    expect(sub.set.text).toEqual({ kind: "subword", size: 256, slots: 6, perWord: 8 });
    expect(sub.set.tokens.length).toBe(sub.instructions.length * 6 * 8);
    const cache = join(tempDir(), "set.cache");
    saveTrainingSet(cache, "k", sub);
    const back = loadTrainingSet(cache, "k");
    expect(back?.text.toJson()).toEqual({ kind: "subword", ...subword });
    expect(back?.set.text).toEqual(sub.set.text);
    expect(back?.set.tokens).toEqual(sub.set.tokens);
    saveTrainingSet(cache, "k", built);
    expect(loadTrainingSet(cache, "k")?.text.toJson()).toEqual(built.text.toJson());
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

describe("recording every object of a scene as the target", () => {
  it("replays each scene once per object, names it, judges success on it and records it", async () => {
    const suite = createTabletopSuite({ render: { enabled: false } });
    const task = "kitchen_red_block";
    const targets = suite.tasks().find((t) => t.id === task)?.targets ?? [];
    expect(targets).toEqual(["yellow_can", "green_box", "blue_ball", "knife"]);
    const out = join(tempDir(), "all");
    const r = await recordDemonstrations({
      suite,
      policy: scriptedPolicy,
      tasks: [task],
      scenes: [20, 21],
      episodes: 1 + targets.length,
      seed: 0,
      targets: "all",
      // Past success to the horizon: the data shows what to do when done (release, retreat, hold).
      tail: 1000,
      out,
      maxAttempts: 1 + targets.length,
    });
    // Every object, the knife included, was carried to the basket by the literal expert.
    expect(r.failed).toEqual([]);
    const ds = await openDataset(out);
    expect(ds.episodes.map((e) => e.target)).toEqual(["", ...targets]);
    expect(ds.episodes.map((e) => e.task)).toEqual([
      "pick up the red block and place it in the basket",
      "pick up the yellow can and place it in the basket",
      "pick up the green box and place it in the basket",
      "pick up the blue ball and place it in the basket",
      "pick up the knife and place it in the basket",
    ]);
    expect(ds.episodes.every((e) => e.suiteTask === task && e.scene === 20)).toBe(true);
    // Done means still: every episode runs to the horizon and its last 50 steps hold the gripper
    // within a millimetre, open.
    const horizon = suite.tasks().find((t) => t.id === task)?.horizon;
    for (let i = 0; i < ds.episodes.length; i++) {
      const frames = (await ds.episode(i, { images: false })).frames;
      expect(frames.length).toBe(horizon);
      const tail = frames.slice(-50);
      const first = tail[0]?.state as Float32Array;
      for (const f of tail) {
        const d = Math.hypot(
          f.state[0]! - first[0]!,
          f.state[1]! - first[1]!,
          f.state[2]! - first[2]!,
        );
        expect(d).toBeLessThan(0.001);
        expect(f.action[6]).toBe(-1);
      }
    }
  });

  it("refuses a target the task does not have, before placing the scene", async () => {
    const sim = await createTabletopSuite({ render: { enabled: false } }).open();
    try {
      await expect(
        Promise.resolve(
          sim.reset({ task: "kitchen_red_block", scene: 0, seed: 0, target: "orange_cup" }),
        ),
      ).rejects.toThrow(/cannot be retargeted to 'orange_cup'.*|targets are/);
    } finally {
      await sim.close();
    }
    const stub = await stubSuite.open();
    expect(() => stub.reset({ task: "fetch_cup", scene: 0, seed: 0, target: "cup" })).toThrow(
      /cannot be retargeted/,
    );
  });
});
