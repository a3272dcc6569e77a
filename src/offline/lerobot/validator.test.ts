import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../../test/support/tmp.js";
import { isProvaelError } from "../../core/errors.js";
import { Rng } from "../../core/rng.js";
import type { Image } from "../../core/types.js";
import type { Frame } from "./layout.js";
import { openDataset } from "./reader.js";
import { requireDataset, validateDataset } from "./validator.js";
import { encodeVideo } from "./video.js";
import { LeRobotWriter, type WriterOptions } from "./writer.js";

/** A smooth image (video codecs keep smooth images close; noise they do not). */
function image(rng: Rng, w: number, h: number): Image {
  const data = new Uint8Array(w * h * 3);
  const [a, b, c] = [rng.int(200), rng.int(200), rng.int(200)];
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const i = (y * w + x) * 3;
      data[i] = a + x;
      data[i + 1] = b + y;
      data[i + 2] = c;
    }
  return { width: w, height: h, channels: 3, data };
}

function frames(rng: Rng, n: number, dims: number, cameras: string[]): Frame[] {
  return Array.from({ length: n }, () => ({
    state: Float32Array.from({ length: dims }, () => rng.uniform(-1, 1)),
    action: Float32Array.from({ length: dims }, () => rng.uniform(-1, 1)),
    images: Object.fromEntries(cameras.map((c) => [c, image(rng, 16, 12)])),
  }));
}

function write(
  dir: string,
  options: Partial<WriterOptions> & { dims?: number; png?: boolean } = {},
): Frame[][] {
  const { dims = 6, png = false, ...rest } = options;
  const cameras = Object.keys(rest.cameras ?? { front: [12, 16], wrist: [12, 16] });
  const w = new LeRobotWriter(dir, {
    robotType: "so101_follower",
    fps: 30,
    cameras: { front: [12, 16], wrist: [12, 16] },
    stateNames: Array.from({ length: dims }, (_, i) => `joint_${i}.pos`),
    actionNames: Array.from({ length: dims }, (_, i) => `joint_${i}.pos`),
    ...(png ? {} : { video: { codec: "h264" as const } }),
    ...rest,
  });
  const rng = Rng.fromLabel(`fixture:${dir}`);
  const eps = [frames(rng, 5, dims, cameras), frames(rng, 4, dims, cameras)];
  for (const f of eps) w.addEpisode({ task: "pick up the cube", frames: f });
  w.finish();
  return eps;
}

async function refusal(p: Promise<unknown>): Promise<{ check: string; message: string }> {
  try {
    await p;
  } catch (e) {
    if (isProvaelError(e) && e.code === "config/dataset")
      return { check: String(e.details.check), message: e.message };
    throw e;
  }
  throw new Error("expected a refusal");
}

const SO101 = { robotTypes: ["so101", "so101_follower"], stateDim: 6, actionDim: 6 };

describe("LeRobotDataset v3.0 with video camera streams", () => {
  it("writes mp4 streams, decodes chosen frames with ffmpeg and accepts the dataset", async () => {
    const dir = join(tempDir(), "so101_ok");
    const eps = write(dir);
    const info = JSON.parse(readFileSync(join(dir, "meta", "info.json"), "utf8"));
    expect(info.features["observation.images.front"].dtype).toBe("video");
    expect(info.video_path).toMatch(/^videos\/\{video_key\}/);
    const ds = await requireDataset(dir, { ...SO101, cameras: ["front", "wrist"] });
    expect(ds.videoCameras).toEqual(["front", "wrist"]);
    // Episode 1 starts 5 frames into the file: its frame 2 is the file's frame 7.
    const ep = await ds.episode(1, { frames: [0, 2] });
    expect(Object.keys(ep.frames[1]?.images ?? {})).toEqual([]);
    for (const k of [0, 2]) {
      const got = ep.frames[k]?.images.front as Image;
      const want = ((eps[1] as Frame[])[k] as Frame).images.front as Image;
      let err = 0;
      for (let i = 0; i < got.data.length; i++)
        err += Math.abs((got.data[i] as number) - (want.data[i] as number));
      expect(err / got.data.length).toBeLessThan(4);
    }
    expect(ep.frames[2]?.state).toEqual(((eps[1] as Frame[])[2] as Frame).state);
    expect((await validateDataset(dir)).problems).toEqual([]);
  });

  it("refuses a v2.1 dataset", async () => {
    const dir = join(tempDir(), "so101_v21");
    write(dir);
    const infoPath = join(dir, "meta", "info.json");
    const info = JSON.parse(readFileSync(infoPath, "utf8"));
    info.codebase_version = "v2.1";
    writeFileSync(infoPath, JSON.stringify(info));
    const r = await refusal(requireDataset(dir, SO101));
    expect(r.check).toBe("codebase_version");
    expect(r.message).toMatch(/LeRobotDataset "v2.1", the study reads v3.0 only/);
  });

  it("refuses a 4-DoF koch arm in a folder named so101, by robot type and by dimensions", async () => {
    const dir = join(tempDir(), "so101_test");
    write(dir, { robotType: "koch", dims: 4 });
    const byType = await refusal(requireDataset(dir, SO101));
    expect(byType.check).toBe("robot_type");
    expect(byType.message).toMatch(
      /robot_type "koch" \(state 4-D, action 4-D\), not "so101" or "so101_follower"/,
    );
    // Without a robot type to hold it to, the dimensions still refuse it.
    const byDims = await refusal(requireDataset(dir, { stateDim: 6, actionDim: 6 }));
    expect(byDims.check).toBe("state_dim");
    expect(byDims.message).toMatch(/observation.state is 4-D .* the policy's is 6-D/);
  });

  it("refuses a folder of bare mp4 files", async () => {
    const dir = join(tempDir(), "so101_pick_and_place");
    mkdirSync(join(dir, "clips"), { recursive: true });
    const rng = Rng.fromLabel("bare");
    encodeVideo(join(dir, "episode_0.mp4"), [image(rng, 16, 12), image(rng, 16, 12)], { fps: 30 });
    encodeVideo(join(dir, "clips", "episode_1.mp4"), [image(rng, 16, 12)], { fps: 30 });
    const r = await refusal(requireDataset(dir, SO101));
    expect(r.check).toBe("not-a-dataset");
    expect(r.message).toMatch(
      /not a LeRobotDataset: 2 bare video file\(s\) \(clips\/episode_1.mp4, episode_0.mp4\)/,
    );
  });

  it("refuses a missing camera stream: absent from the features, or its video file gone", async () => {
    const dir = join(tempDir(), "so101_nowrist");
    write(dir);
    const absent = await refusal(requireDataset(dir, { ...SO101, cameras: ["top"] }));
    expect(absent.check).toBe("camera");
    expect(absent.message).toMatch(
      /no camera stream 'observation.images.top' \(it has 'front', 'wrist'\)/,
    );
    rmSync(join(dir, "videos", "observation.images.wrist"), { recursive: true });
    const gone = await refusal(requireDataset(dir, { ...SO101, cameras: ["front", "wrist"] }));
    expect(gone.check).toBe("video_file");
    expect(gone.message).toMatch(/camera stream 'wrist' of episode 0 is missing/);
  });

  it("refuses a dataset without a field the study reads", async () => {
    const dir = join(tempDir(), "so101_noaction");
    write(dir);
    const infoPath = join(dir, "meta", "info.json");
    const info = JSON.parse(readFileSync(infoPath, "utf8"));
    delete info.features.action;
    writeFileSync(infoPath, JSON.stringify(info));
    const r = await refusal(requireDataset(dir, SO101));
    expect(r.check).toBe("field");
    expect(r.message).toMatch(/no 'action' feature/);
  });

  it("reads PNG datasets as before", async () => {
    const dir = join(tempDir(), "png");
    const eps = write(dir, { robotType: "provael_tabletop", png: true });
    const ds = await openDataset(dir);
    expect(ds.videoCameras).toEqual([]);
    const ep = await ds.episode(0, { frames: [3] });
    expect(ep.frames[3]?.images.wrist).toEqual(((eps[0] as Frame[])[3] as Frame).images.wrist);
    expect(ep.frames[0]?.images).toEqual({});
  });
});
