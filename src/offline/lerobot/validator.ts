/**
 * Dataset checks. `validateDataset` lists every structural problem of a directory (for
 * `provael record` and tests); `requireDataset` is what a consumer calls before using one: it
 * raises on the first thing that would make a study about the wrong data (a v2.1 dataset, a
 * robot type or dimensions other than the ones expected, bare video files, a camera stream that
 * is declared but absent, a field the study reads that is missing), never warns.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { asyncBufferFromFile, parquetMetadataAsync } from "hyparquet";
import { ProvaelError } from "../../core/errors.js";
import {
  CODEBASE_VERSION,
  type DatasetInfo,
  FRAME_FIELDS,
  IMAGE_PREFIX,
  TASKS_PATH,
} from "./layout.js";
import { type Dataset, openDataset, type ReadEpisode, readJson } from "./reader.js";

export interface ValidationResult {
  valid: boolean;
  problems: string[];
  episodes: number;
  frames: number;
}

/**
 * Checks a dataset directory: info.json fields, feature shapes, the tasks and episodes tables,
 * that every episode's rows exist with contiguous indices, vector lengths match the features,
 * and (on each episode's first frame) images decode to the declared shape.
 */

export async function validateDataset(dir: string): Promise<ValidationResult> {
  const problems: string[] = [];
  const infoPath = join(dir, "meta", "info.json");
  if (!existsSync(infoPath))
    return { valid: false, problems: [`missing ${infoPath}`], episodes: 0, frames: 0 };
  const info = readJson(infoPath) as Partial<DatasetInfo>;
  if (info.codebase_version !== CODEBASE_VERSION)
    problems.push(`codebase_version is ${JSON.stringify(info.codebase_version)}, expected "v3.0"`);
  for (const key of [
    "robot_type",
    "fps",
    "total_episodes",
    "total_frames",
    "data_path",
    "features",
  ] as const) {
    if (info[key] === undefined) problems.push(`info.json lacks '${key}'`);
  }
  const features = info.features ?? {};
  for (const [name, f] of Object.entries(features)) {
    if (typeof f?.dtype !== "string") problems.push(`feature '${name}' has no dtype`);
    if (!Array.isArray(f?.shape) || !f.shape.every((d) => Number.isInteger(d) && d > 0))
      problems.push(`feature '${name}' has a bad shape ${JSON.stringify(f?.shape)}`);
  }
  for (const name of ["timestamp", "frame_index", "episode_index", "index", "task_index"]) {
    if (!features[name]) problems.push(`feature '${name}' is missing`);
  }
  if (problems.length > 0) return { valid: false, problems, episodes: 0, frames: 0 };
  let ds: Dataset;
  try {
    ds = await openDataset(dir);
  } catch (e) {
    return {
      valid: false,
      problems: [e instanceof Error ? e.message : String(e)],
      episodes: 0,
      frames: 0,
    };
  }
  if (ds.episodes.length !== info.total_episodes)
    problems.push(
      `total_episodes is ${info.total_episodes} but the episodes table has ${ds.episodes.length}`,
    );
  const vectorShape = (name: string) => features[name]?.shape[0];
  let expected = 0;
  let frames = 0;
  for (const [i, e] of ds.episodes.entries()) {
    if (e.episodeIndex !== i) problems.push(`episode ${i} has episode_index ${e.episodeIndex}`);
    if (e.from !== expected)
      problems.push(`episode ${i} starts at ${e.from}, expected ${expected}`);
    if (e.to - e.from !== e.length) problems.push(`episode ${i} length ${e.length} != to - from`);
    expected = e.to;
    if (!ds.tasks.includes(e.task)) problems.push(`episode ${i} names an unknown task`);
    let ep: ReadEpisode;
    try {
      ep = await ds.episode(i, { images: false });
    } catch (err) {
      problems.push(`episode ${i}: ${err instanceof Error ? err.message : String(err)}`);
      continue;
    }
    frames += ep.frames.length;
    if (ep.frames.length !== e.length)
      problems.push(`episode ${i} has ${ep.frames.length} rows, expected ${e.length}`);
    ep.frames.forEach((f, k) => {
      if (f.frameIndex !== k || f.index !== e.from + k)
        problems.push(`episode ${i} frame ${k} has frame_index ${f.frameIndex}, index ${f.index}`);
      if (f.state.length !== vectorShape("observation.state"))
        problems.push(`episode ${i} frame ${k}: state has ${f.state.length} values`);
      if (f.action.length !== vectorShape("action"))
        problems.push(`episode ${i} frame ${k}: action has ${f.action.length} values`);
    });
    if (ds.cameras.length > 0) {
      const first = await ds.episode(i, { images: true, maxFrames: 1 }).catch(() => undefined);
      const img = first?.frames[0]?.images;
      for (const cam of ds.cameras) {
        const shape = features[IMAGE_PREFIX + cam]?.shape ?? [];
        const got = img?.[cam];
        if (!got || got.height !== shape[0] || got.width !== shape[1] || got.channels !== shape[2])
          problems.push(`episode ${i}: '${cam}' image does not decode to ${JSON.stringify(shape)}`);
      }
    }
    if (problems.length > 50) {
      problems.push("… stopped after 50 problems");
      break;
    }
  }
  if (frames !== info.total_frames && problems.length <= 50)
    problems.push(`total_frames is ${info.total_frames} but the data holds ${frames}`);
  return { valid: problems.length === 0, problems, episodes: ds.episodes.length, frames };
}

/** What a consumer needs of a dataset; every field given is checked. */
export interface DatasetExpectations {
  /** Accepted `robot_type` values (e.g. so101, so101_follower). */
  robotTypes?: readonly string[];
  /** Length of `observation.state` the policy reads. */
  stateDim?: number;
  /** Length of `action` the policy predicts. */
  actionDim?: number;
  /** Dataset camera names that must be present (image or video streams). */
  cameras?: readonly string[];
}

function refuse(check: string, message: string, details: Record<string, unknown>, hint: string) {
  return new ProvaelError("config/dataset", message, { details: { check, ...details }, hint });
}

/** Video files directly under `dir` or one level down (a folder of bare recordings). */
function bareVideos(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, depth: number) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (/\.(mp4|mkv|avi|mov|webm)$/i.test(name)) out.push(relative(dir, p));
      else if (depth < 2 && statSync(p).isDirectory()) walk(p, depth + 1);
    }
  };
  walk(dir, 0);
  return out;
}

function vectorDim(info: DatasetInfo, name: string): number | undefined {
  const shape = info.features[name]?.shape;
  return Array.isArray(shape) && shape.length === 1 ? shape[0] : undefined;
}

/**
 * Opens a dataset only if it is what the consumer expects, else raises `config/dataset` naming
 * the check that failed (`details.check`): `not-a-dataset`, `codebase_version`, `robot_type`,
 * `state_dim`, `action_dim`, `camera`, `video_file`, `field`.
 *
 * The dimensions are checked against the features and the data files' own schema, so a dataset
 * whose name says one robot and whose data says another is refused rather than studied.
 */
export async function requireDataset(dir: string, expect: DatasetExpectations): Promise<Dataset> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw refuse("not-a-dataset", `${dir} is not a directory`, { dir }, "pass --dataset DIR");
  }
  const infoPath = join(dir, "meta", "info.json");
  if (!existsSync(infoPath)) {
    const videos = bareVideos(dir);
    throw refuse(
      "not-a-dataset",
      videos.length > 0
        ? `${dir} is not a LeRobotDataset: ${videos.length} bare video file(s) (${videos.slice(0, 3).join(", ")}${videos.length > 3 ? ", …" : ""}) and no meta/info.json, so no states, actions or episode boundaries`
        : `${dir} is not a LeRobotDataset: no meta/info.json`,
      { dir, videos: videos.slice(0, 20) },
      "the study needs a LeRobotDataset v3.0 (meta/info.json, data/*.parquet, videos/); record one with `provael record` or convert the recordings with LeRobot",
    );
  }
  const info = readJson(infoPath) as Partial<DatasetInfo>;
  if (info.codebase_version !== CODEBASE_VERSION) {
    throw refuse(
      "codebase_version",
      `${dir} is LeRobotDataset ${JSON.stringify(info.codebase_version ?? null)}, the study reads ${CODEBASE_VERSION} only`,
      { found: info.codebase_version ?? null, expected: CODEBASE_VERSION },
      "convert it with LeRobot's v2.1 -> v3.0 conversion script (lerobot.datasets.v30.convert_dataset_v21_to_v30)",
    );
  }
  const features = info.features ?? {};
  const full = info as DatasetInfo;
  const state = vectorDim(full, "observation.state");
  const action = vectorDim(full, "action");
  if (expect.robotTypes && !expect.robotTypes.includes(String(info.robot_type))) {
    throw refuse(
      "robot_type",
      `${dir} was recorded on robot_type ${JSON.stringify(info.robot_type ?? null)} (state ${state ?? "?"}-D, action ${action ?? "?"}-D), not ${expect.robotTypes.map((r) => JSON.stringify(r)).join(" or ")}: its name is not evidence of its robot`,
      { found: info.robot_type ?? null, expected: expect.robotTypes, state, action },
      "pick a dataset recorded on the embodiment the policy was built for, or state the robot types the plan accepts",
    );
  }
  for (const field of FRAME_FIELDS) {
    if (!features[field]) {
      throw refuse(
        "field",
        `${dir} has no '${field}' feature, which the study reads`,
        { field, features: Object.keys(features) },
        "info.json's features must declare every per-frame field",
      );
    }
  }
  for (const [name, got, want] of [
    ["state_dim", state, expect.stateDim],
    ["action_dim", action, expect.actionDim],
  ] as const) {
    if (want !== undefined && got !== want) {
      const field = name === "state_dim" ? "observation.state" : "action";
      throw refuse(
        name,
        `${dir}'s ${field} is ${got ?? "not a vector"}-D (robot_type ${JSON.stringify(info.robot_type ?? null)}), the policy's is ${want}-D`,
        { field, found: got ?? null, expected: want, robot_type: info.robot_type ?? null },
        "a policy can only be studied on data of its own embodiment's dimensions",
      );
    }
  }
  const ds = await openDataset(dir);
  for (const cam of expect.cameras ?? []) {
    if (!ds.cameras.includes(cam)) {
      throw refuse(
        "camera",
        `${dir} has no camera stream '${IMAGE_PREFIX}${cam}' (it has ${ds.cameras.length > 0 ? ds.cameras.map((c) => `'${c}'`).join(", ") : "none"})`,
        { camera: cam, cameras: ds.cameras },
        "map the policy's cameras onto the dataset's with --camera-map POLICY_CAM=DATASET_CAM",
      );
    }
  }
  if (!existsSync(join(dir, TASKS_PATH)) || ds.episodes.length === 0) {
    throw refuse(
      "field",
      `${dir} has no episodes table or no episodes`,
      {},
      "is the dataset complete?",
    );
  }
  // The data files' own schema must carry the fields (not only info.json), and every video
  // stream the study will read must exist for every episode.
  const checkedData = new Set<string>();
  for (const e of ds.episodes) {
    const file = ds.dataFile(e);
    if (!checkedData.has(file)) {
      checkedData.add(file);
      if (!existsSync(file)) {
        throw refuse(
          "field",
          `episode ${e.episodeIndex}'s data file ${relative(dir, file)} is missing`,
          { file },
          "is the dataset complete?",
        );
      }
      const md = await parquetMetadataAsync(await asyncBufferFromFile(file));
      const columns = new Set(md.schema.map((s) => s.name));
      for (const field of FRAME_FIELDS) {
        if (!columns.has(field)) {
          throw refuse(
            "field",
            `${relative(dir, file)} has no '${field}' column`,
            { field, file },
            "is the data file complete?",
          );
        }
      }
    }
    for (const cam of expect.cameras ?? ds.cameras) {
      if (!ds.videoCameras.includes(cam)) continue;
      if (!e.videos[cam]) {
        throw refuse(
          "video_file",
          `episode ${e.episodeIndex} has no span for camera stream '${cam}' in the episodes table`,
          { camera: cam, episode: e.episodeIndex },
          "the episodes table needs videos/<key>/chunk_index, file_index, from_timestamp, to_timestamp",
        );
      }
      const file = ds.videoFile(cam, e);
      if (!existsSync(file)) {
        throw refuse(
          "video_file",
          `camera stream '${cam}' of episode ${e.episodeIndex} is missing: no ${relative(dir, file)}`,
          { camera: cam, episode: e.episodeIndex, file: relative(dir, file) },
          "the dataset declares a video stream whose file is absent; download the videos too",
        );
      }
    }
  }
  return ds;
}
