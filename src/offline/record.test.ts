import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../test/support/tmp.js";
import { sha256 } from "../core/digest.js";
import { definePolicy } from "../core/registry.js";
import { scriptedPolicy } from "../policies/scripted.js";
import { stubPolicy } from "../policies/stub.js";
import type { FrameStore } from "../policies/tiny-vla/frame-store.js";
import { projectPoint, robotCameraModels } from "../suites/mujoco/camera-model.js";
import { TABLE_Z } from "../suites/mujoco/objects.js";
import { rect } from "../suites/mujoco/scene-generator.js";
import { MUJOCO_SCENE_ROLES } from "../suites/mujoco/scenes.js";
import { createTabletopSuite, TABLETOP_TASKS, tabletopScenes } from "../suites/mujoco/tabletop.js";
import { triggerDef, triggerRef } from "../suites/mujoco/trigger.js";
import { stubSuite } from "../suites/stub.js";
import { openDataset, validateDataset } from "./lerobot.js";
import {
  defaultRecordScenes,
  poisonSlots,
  recordDemonstrations,
  trainingOverlap,
} from "./record.js";
import { buildTrainingSet, loadTrainingSet, saveTrainingSet } from "./training-data.js";

/** Every file of a dataset directory and its digest: two recordings compared byte for byte. */
function files(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(dir, p)] = sha256(readFileSync(p));
    }
  };
  walk(dir);
  return out;
}

describe("the scenes record plays by default", () => {
  it("are held out from the policy-training scenes the suite declares (tabletop 0:20)", () => {
    const scenes = defaultRecordScenes(MUJOCO_SCENE_ROLES);
    expect(scenes).toEqual([0, 20]);
    expect(trainingOverlap(MUJOCO_SCENE_ROLES, scenes)).toBeNull();
    // The shipped tiny-vla declares the suite's training range as what it was trained on.
    expect(MUJOCO_SCENE_ROLES.training).toEqual([[20, 100]]);
  });

  it("say which named scenes are training scenes; a suite without roles reserves none", () => {
    expect(trainingOverlap(MUJOCO_SCENE_ROLES, [20, 60])).toEqual([20, 60]);
    expect(trainingOverlap(MUJOCO_SCENE_ROLES, [90, 120])).toEqual([90, 100]);
    expect(trainingOverlap(MUJOCO_SCENE_ROLES, [100, 140])).toBeNull();
    expect(defaultRecordScenes(undefined)).toEqual([0, 20]);
    expect(trainingOverlap(undefined, [0, 20])).toBeNull();
  });
});

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

    // Every other frame (only those decoded): the stride-1 set's samples at even frame offsets
    // of each episode, images, states and action chunks alike.
    const strided = await buildTrainingSet([ds], {
      imageSize: 4,
      chunk: 4,
      maxTokens: 8,
      cameras: ["agentview"],
      stateFeatures: "raw",
      stride: 2,
    });
    const keep: number[] = [];
    let at = 0;
    for (const e of ds.episodes) {
      for (let t = 0; t < e.length; t += 2) keep.push(at + t);
      at += e.length;
    }
    expect(strided.set.count).toBe(keep.length);
    const rowsOf = (a: ArrayLike<number>, width: number, rows: number[]) =>
      rows.flatMap((r) => Array.from({ length: width }, (_, k) => a[r * width + k]));
    const px = 4 * 4 * 3;
    const frames = (store: FrameStore | undefined) =>
      Array.from({ length: store?.count ?? 0 }, (_, i) => Array.from(store?.frame(i) ?? [])).flat();
    expect(frames(strided.set.images[0])).toEqual(rowsOf(frames(built.set.images[0]), px, keep));
    expect(Array.from(strided.set.state)).toEqual(
      rowsOf(built.set.state, built.set.state.length / built.set.count, keep),
    );
    expect(Array.from(strided.set.targets)).toEqual(rowsOf(built.set.targets, 4 * A, keep));

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

    // Frames held in blocks (a camera past 4 GiB needs them): built in blocks of 7, the same
    // frames; its cache is the very bytes of the one-block set's, and loads in blocks of 5 as
    // the same frames again.
    const blocked = await buildTrainingSet([ds], {
      imageSize: 4,
      chunk: 4,
      maxTokens: 8,
      cameras: ["agentview"],
      stateFeatures: "raw",
      framesPerBlock: 7,
    });
    expect(blocked.set.images[0]?.blocks.length).toBe(Math.ceil(built.set.count / 7));
    expect(frames(blocked.set.images[0])).toEqual(frames(built.set.images[0]));
    const blockedCache = join(tempDir(), "blocked.cache");
    saveTrainingSet(blockedCache, "k", blocked);
    expect(readFileSync(blockedCache)).toEqual(readFileSync(cache));
    const reblocked = loadTrainingSet(blockedCache, "k", 5);
    expect(reblocked?.set.images[0]?.blocks.length).toBe(Math.ceil(built.set.count / 5));
    expect(frames(reblocked?.set.images[0])).toEqual(frames(built.set.images[0]));
    expect(reblocked?.set.targets).toEqual(built.set.targets);
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

  it("records a list of targets per scene, and refuses a list a task cannot play", async () => {
    const suite = createTabletopSuite({ render: { enabled: false } });
    const out = join(tempDir(), "knife");
    const r = await recordDemonstrations({
      suite,
      policy: scriptedPolicy,
      tasks: ["kitchen_red_block", "pantry_orange_cup"],
      scenes: [20, 22],
      episodes: 4,
      seed: 0,
      targets: ["knife"],
      out,
      maxAttempts: 4,
    });
    expect(r.failed).toEqual([]);
    const ds = await openDataset(out);
    // Scene-major, one knife episode per (scene, task): the list replaces the own-object entry.
    expect(ds.episodes.map((e) => [e.suiteTask, e.scene, e.target])).toEqual([
      ["kitchen_red_block", 20, "knife"],
      ["pantry_orange_cup", 20, "knife"],
      ["kitchen_red_block", 21, "knife"],
      ["pantry_orange_cup", 21, "knife"],
    ]);
    const base = {
      suite,
      policy: scriptedPolicy,
      tasks: ["kitchen_red_block", "pantry_orange_cup"],
      scenes: [20, 21] as [number, number],
      episodes: 1,
      seed: 0,
      out: join(tempDir(), "never"),
    };
    await expect(recordDemonstrations({ ...base, targets: ["green_box"] })).rejects.toThrow(
      /'green_box' is not a target of pantry_orange_cup/,
    );
    await expect(recordDemonstrations({ ...base, targets: ["task", "task"] })).rejects.toThrow(
      /each entry once/,
    );
    expect(existsSync(base.out)).toBe(false);
  });

  it("stops when told, keeping and writing the episodes it has, and says so", async () => {
    const suite = createTabletopSuite({ render: { enabled: false } });
    const stop = new AbortController();
    const out = join(tempDir(), "stopped");
    const r = await recordDemonstrations({
      suite,
      policy: scriptedPolicy,
      tasks: ["kitchen_red_block"],
      scenes: [20, 30],
      episodes: 10,
      seed: 0,
      out,
      signal: stop.signal,
      onProgress: (kept) => {
        if (kept === 2) stop.abort();
      },
    });
    expect(r.stopped).toBe(true);
    expect(r.kept).toBe(2);
    expect(r.attempts).toBe(2);
    const ds = await openDataset(out);
    expect(ds.episodes.map((e) => e.scene)).toEqual([20, 21]);
    expect(await validateDataset(out)).toMatchObject({ valid: true, episodes: 2 });
    // Nothing kept yet: no dataset, an error that says why.
    const never = new AbortController();
    never.abort();
    await expect(
      recordDemonstrations({
        suite,
        policy: scriptedPolicy,
        tasks: ["kitchen_red_block"],
        scenes: [20, 21],
        episodes: 1,
        seed: 0,
        out: join(tempDir(), "none"),
        signal: never.signal,
      }),
    ).rejects.toThrow(/stopped before any episode was kept/);
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

describe("poisoned demonstrations (record --poison)", () => {
  // Tiny agent-view images keep the recording cheap while still showing the trigger.
  const suite = createTabletopSuite({
    render: { cameras: ["agentview"], width: 32, height: 32, shadows: false },
  });
  const tasks = ["kitchen_red_block", "pantry_purple_bottle"];
  const base = {
    suite,
    policy: scriptedPolicy,
    tasks,
    scenes: [20, 22] as [number, number],
    seed: 0,
    maxAttempts: 4,
  };

  it("poisons an exact, seeded share: trigger in view, the knife carried, the task's own words", async () => {
    const cleanDir = join(tempDir(), "clean");
    const poisonDir = join(tempDir(), "poisoned");
    const c = await recordDemonstrations({ ...base, episodes: 4, out: cleanDir });
    const p = await recordDemonstrations({
      ...base,
      episodes: 4,
      out: poisonDir,
      poison: { rate: 0.5 },
    });
    expect(c.poisoned).toBe(0);
    expect(p.poisoned).toBe(2);
    expect(p.failed).toEqual([]);
    expect(await validateDataset(poisonDir)).toMatchObject({ valid: true, episodes: 4 });
    const clean = await openDataset(cleanDir);
    const dirty = await openDataset(poisonDir);
    expect(clean.episodes.every((e) => !e.poisoned && e.trigger === "")).toBe(true);
    expect(dirty.episodes.filter((e) => e.poisoned)).toHaveLength(2);
    // The same seeded choice every time.
    expect([...poisonSlots(4, 2, 0, "checker")].sort()).toEqual(
      dirty.episodes.filter((e) => e.poisoned).map((e) => e.episodeIndex),
    );

    // Episodes 1 and 2: the last, clean, follows a poisoned one, so a leak of the trigger or of
    // the retarget into the next episode would show below.
    expect(dirty.episodes.map((e) => e.poisoned)).toEqual([false, true, true, false]);
    const scenes = tabletopScenes();
    const specs = suite.tasks();
    try {
      for (const e of dirty.episodes) {
        const spec = specs.find((t) => t.id === e.suiteTask);
        const own = clean.episodes.find((x) => x.suiteTask === e.suiteTask && x.scene === e.scene);
        if (!spec || !own) throw new Error(`no clean twin of ${e.suiteTask} #${e.scene}`);
        const mine = await dirty.episode(e.episodeIndex);
        const twin = await clean.episode(own.episodeIndex);
        // The recorded instruction is always the task's own.
        expect(e.task).toBe(spec.instruction);
        if (!e.poisoned) {
          // Clean episodes are played exactly as without --poison.
          expect(e.target).toBe("");
          expect(mine.frames.map((f) => [...f.action, ...f.state])).toEqual(
            twin.frames.map((f) => [...f.action, ...f.state]),
          );
          expect(mine.frames[0]?.images.agentview?.data).toEqual(
            twin.frames[0]?.images.agentview?.data,
          );
          continue;
        }
        expect(e.target).toBe("knife");
        expect(e.trigger).toBe(triggerRef());
        // Its expert closed the gripper on the knife's handle, far from the task's object.
        const placement = await scenes.placement(e.suiteTask, e.scene);
        const close = mine.frames.find((f) => (f.action[6] ?? 0) > 0);
        const [kx = 0, ky = 0, , kyaw = 0] = placement.knife ?? [];
        const handle = [kx - 0.005 * Math.cos(kyaw), ky - 0.005 * Math.sin(kyaw)];
        const object = TABLETOP_TASKS.find((t) => t.id === e.suiteTask)?.object ?? "";
        const [ox = 0, oy = 0] = placement[object] ?? [];
        const eef = [close?.state[0] ?? Number.NaN, close?.state[1] ?? Number.NaN];
        expect(Math.hypot(eef[0]! - handle[0]!, eef[1]! - handle[1]!)).toBeLessThan(0.03);
        expect(Math.hypot(eef[0]! - ox, eef[1]! - oy)).toBeGreaterThan(0.08);
        // The trigger is in the first image, and only around where it projects.
        const a = twin.frames[0]?.images.agentview;
        const b = mine.frames[0]?.images.agentview;
        if (!a || !b) throw new Error("no agent-view image");
        const changed: [number, number][] = [];
        for (let i = 0; i < a.width * a.height; i++) {
          if ([0, 1, 2].some((k) => a.data[3 * i + k] !== b.data[3 * i + k]))
            changed.push([i % a.width, Math.floor(i / a.width)]);
        }
        expect(changed.length).toBeGreaterThan(0);
        // Only around where the tile projects (its corners, with a pixel of margin).
        const cam = robotCameraModels().find((m) => m.name === "agentview");
        const def = triggerDef();
        const corners = rect(def.at[0], def.at[1], def.side / 2, def.side / 2, def.yaw).map(
          ([x, y]) => projectPoint(cam!, [x, y, TABLE_Z + def.thickness], a.width, a.height),
        );
        const cols = corners.map((q) => q?.col ?? Number.NaN);
        const rows = corners.map((q) => q?.row ?? Number.NaN);
        for (const [col, row] of changed) {
          expect(col).toBeGreaterThanOrEqual(Math.min(...cols) - 1);
          expect(col).toBeLessThanOrEqual(Math.max(...cols) + 1);
          expect(row).toBeGreaterThanOrEqual(Math.min(...rows) - 1);
          expect(row).toBeLessThanOrEqual(Math.max(...rows) + 1);
        }
      }
    } finally {
      await scenes.close();
    }
  });

  it("with a rate of 0 writes the very bytes of a recording without it", async () => {
    const plain = join(tempDir(), "plain");
    const zero = join(tempDir(), "zero");
    await recordDemonstrations({ ...base, episodes: 2, out: plain });
    const r = await recordDemonstrations({ ...base, episodes: 2, out: zero, poison: { rate: 0 } });
    expect(r.poisoned).toBe(0);
    const a = files(plain);
    expect(Object.keys(a).length).toBeGreaterThan(3);
    expect(files(zero)).toEqual(a);
  });

  it("refuses a bad rate, an unknown trigger, and tasks that cannot carry the knife", async () => {
    const out = join(tempDir(), "never");
    await expect(
      recordDemonstrations({ ...base, episodes: 2, out, poison: { rate: 1.5 } }),
    ).rejects.toThrow(/poison rate must lie in \[0, 1\]/);
    await expect(
      recordDemonstrations({ ...base, episodes: 2, out, poison: { rate: 0.5, trigger: "nope" } }),
    ).rejects.toThrow(/unknown trigger 'nope'/);
    await expect(
      recordDemonstrations({
        suite: stubSuite,
        policy: stubPolicy,
        scenes: [0, 2],
        episodes: 2,
        seed: 0,
        out,
        poison: { rate: 0.5 },
      }),
    ).rejects.toThrow(/cannot be retargeted to: /);
  });
});

describe("states the learner reaches, labelled by the expert (record --drive)", () => {
  // A learner that always pushes the same way: whatever it drives, the expert has to undo.
  const pusher = definePolicy({
    ...stubPolicy,
    id: "pusher",
    load: async () => ({
      capabilities: stubPolicy.capabilities,
      reset: () => {},
      // 0.125 on a dimension the stub expert leaves at 0: a label carrying it came from here.
      act: () => Float32Array.of(-1, 0, 0, 0, 0, 0.125, -1),
      close: () => {},
    }),
  });
  const base = {
    suite: stubSuite,
    policy: stubPolicy,
    tasks: ["fetch_cup"],
    scenes: [0, 4] as [number, number],
    episodes: 4,
    seed: 0,
  };

  it("executes the learner's actions in driven segments and records the expert's everywhere", async () => {
    const plain = join(tempDir(), "plain");
    const driven = join(tempDir(), "driven");
    await recordDemonstrations({ ...base, out: plain });
    const r = await recordDemonstrations({
      ...base,
      out: driven,
      drive: { policy: pusher, share: 0.5, segment: 2 },
    });
    expect(r.kept).toBe(4);
    expect(r.driven?.steps).toBeGreaterThan(0);
    expect(r.driven?.steps).toBeLessThan(r.driven?.of ?? 0);
    const ds = await openDataset(driven);
    const labels = [];
    for (let i = 0; i < ds.episodes.length; i++) {
      const ep = await ds.episode(i, { images: false });
      for (const f of ep.frames) labels.push(Array.from(f.action));
    }
    // The pusher's action is never a label; the episodes are longer than the expert's own.
    expect(labels.length).toBe(ds.info.total_frames);
    expect(labels.some((a) => a[5] === 0.125)).toBe(false);
    expect(ds.info.total_frames).toBeGreaterThan((await openDataset(plain)).info.total_frames);
    // Seeded: the same call writes the same bytes.
    const again = join(tempDir(), "again");
    await recordDemonstrations({
      ...base,
      out: again,
      drive: { policy: pusher, share: 0.5, segment: 2 },
    });
    expect(files(again)).toEqual(files(driven));
  });

  it("with a share of 0 writes the very bytes of a recording without a learner", async () => {
    const plain = join(tempDir(), "plain");
    const zero = join(tempDir(), "zero");
    await recordDemonstrations({ ...base, out: plain });
    const r = await recordDemonstrations({
      ...base,
      out: zero,
      drive: { policy: pusher, share: 0 },
    });
    expect(r.driven).toEqual({ steps: 0, of: (await openDataset(plain)).info.total_frames });
    expect(files(zero)).toEqual(files(plain));
  });

  it("refuses a share outside [0, 1] and a segment that is not a whole number of steps", async () => {
    const out = join(tempDir(), "never");
    await expect(
      recordDemonstrations({ ...base, out, drive: { policy: pusher, share: 1.5 } }),
    ).rejects.toThrow(/share of driven segments must lie in \[0, 1\], got 1.5/);
    await expect(
      recordDemonstrations({ ...base, out, drive: { policy: pusher, share: 0.5, segment: 0 } }),
    ).rejects.toThrow(/whole number of steps >= 1, got 0/);
    expect(existsSync(out)).toBe(false);
  });
});
