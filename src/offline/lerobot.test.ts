import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { asyncBufferFromFile, parquetMetadataAsync } from "hyparquet";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../test/support/tmp.js";
import { Rng } from "../core/rng.js";
import type { Image } from "../core/types.js";
import {
  decodePng,
  encodePng,
  type Frame,
  formatPath,
  LeRobotWriter,
  openDataset,
  validateDataset,
} from "./lerobot.js";

function image(rng: Rng, w: number, h: number): Image {
  const data = new Uint8Array(w * h * 3);
  for (let i = 0; i < data.length; i++) data[i] = rng.int(256);
  return { width: w, height: h, channels: 3, data };
}

function episode(rng: Rng, n: number): Frame[] {
  return Array.from({ length: n }, () => ({
    state: Float32Array.from({ length: 8 }, () => rng.uniform(-1, 1)),
    action: Float32Array.from({ length: 7 }, () => rng.uniform(-1, 1)),
    images: { agentview: image(rng, 16, 12), wrist: image(rng, 16, 12) },
  }));
}

const OPTIONS = {
  robotType: "provael_arm6",
  fps: 20,
  cameras: { agentview: [12, 16] as [number, number], wrist: [12, 16] as [number, number] },
  stateNames: ["x", "y", "z", "ax", "ay", "az", "left", "right"],
  actionNames: ["dx", "dy", "dz", "droll", "dpitch", "dyaw", "gripper"],
};

describe("LeRobotDataset v3.0", () => {
  it("formats path templates", () => {
    expect(
      formatPath("data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet", {
        chunk_index: 2,
        file_index: 17,
      }),
    ).toBe("data/chunk-002/file-017.parquet");
  });

  it("round-trips PNG images exactly", () => {
    const img = image(Rng.fromLabel("png"), 9, 5);
    expect(decodePng(encodePng(img))).toEqual(img);
  });

  it("writes, reads back and validates a dataset across several data files", async () => {
    const dir = join(tempDir(), "ds");
    const rng = Rng.fromLabel("lerobot-test");
    const eps = [episode(rng, 5), episode(rng, 3), episode(rng, 4)];
    // A tiny file limit forces one data file per episode, exercising the row ranges.
    const w = new LeRobotWriter(dir, { ...OPTIONS, dataFileSizeMb: 0.000001 });
    w.addEpisode({
      task: "pick up the red block",
      frames: eps[0] as Frame[],
      extra: { suite_task: "a", scene: 3, seed: 1 },
    });
    w.addEpisode({ task: "pick up the blue ball", frames: eps[1] as Frame[] });
    w.addEpisode({ task: "pick up the red block", frames: eps[2] as Frame[], extra: { scene: 7 } });
    const info = w.finish();
    expect(info.total_frames).toBe(12);
    expect(info.total_tasks).toBe(2);

    const onDisk = JSON.parse(readFileSync(join(dir, "meta", "info.json"), "utf8"));
    expect(onDisk.codebase_version).toBe("v3.0");
    expect(onDisk.features["observation.images.wrist"]).toEqual({
      dtype: "image",
      shape: [12, 16, 3],
      names: ["height", "width", "channels"],
    });
    expect(existsSync(join(dir, "data", "chunk-000", "file-002.parquet"))).toBe(true);
    expect(existsSync(join(dir, "meta", "tasks.parquet"))).toBe(true);
    expect(existsSync(join(dir, "meta", "stats.json"))).toBe(true);

    // The frame columns are real parquet lists and structs, not JSON strings.
    const md = await parquetMetadataAsync(
      await asyncBufferFromFile(join(dir, "data", "chunk-000", "file-000.parquet")),
    );
    const names = md.schema.map((s) => s.name);
    expect(names).toContain("observation.images.agentview");
    expect(md.schema.find((s) => s.name === "action")?.converted_type).toBe("LIST");

    const ds = await openDataset(dir);
    expect(ds.cameras).toEqual(["agentview", "wrist"]);
    expect(ds.tasks).toEqual(["pick up the red block", "pick up the blue ball"]);
    expect(ds.episodes.map((e) => [e.length, e.from, e.to, e.scene])).toEqual([
      [5, 0, 5, 3],
      [3, 5, 8, -1],
      [4, 8, 12, 7],
    ]);
    expect(ds.episodes[0]?.suiteTask).toBe("a");
    for (const [i, frames] of eps.entries()) {
      const back = await ds.episode(i);
      expect(back.frames.length).toBe(frames.length);
      back.frames.forEach((f, k) => {
        const src = frames[k] as Frame;
        expect(f.state).toEqual(src.state);
        expect(f.action).toEqual(src.action);
        expect(f.images.agentview).toEqual(src.images.agentview);
        expect(f.images.wrist).toEqual(src.images.wrist);
        expect(f.frameIndex).toBe(k);
        expect(f.timestamp).toBeCloseTo(k / 20, 6);
      });
    }
    const noImages = await ds.episode(1, { images: false, maxFrames: 2 });
    expect(noImages.frames.length).toBe(2);
    expect(noImages.frames[0]?.images).toEqual({});

    expect(await validateDataset(dir)).toEqual({
      valid: true,
      problems: [],
      episodes: 3,
      frames: 12,
    });
  });

  it("reports what is wrong with a broken dataset", async () => {
    const dir = join(tempDir(), "ds");
    const w = new LeRobotWriter(dir, OPTIONS);
    w.addEpisode({ task: "t", frames: episode(Rng.fromLabel("x"), 2) });
    w.finish();
    const infoPath = join(dir, "meta", "info.json");
    const info = JSON.parse(readFileSync(infoPath, "utf8"));
    info.codebase_version = "v2.1";
    info.features.action.shape = [0];
    writeFileSync(infoPath, JSON.stringify(info));
    const r = await validateDataset(dir);
    expect(r.valid).toBe(false);
    expect(r.problems.join("\n")).toMatch(/codebase_version/);
    expect(r.problems.join("\n")).toMatch(/feature 'action' has a bad shape/);
    expect((await validateDataset(join(dir, "nope"))).valid).toBe(false);
  });

  it("refuses to overwrite a dataset", () => {
    const dir = join(tempDir(), "ds");
    const w = new LeRobotWriter(dir, OPTIONS);
    w.addEpisode({ task: "t", frames: episode(Rng.fromLabel("y"), 1) });
    w.finish();
    expect(() => new LeRobotWriter(dir, OPTIONS)).toThrow(/already holds a dataset/);
  });
});
