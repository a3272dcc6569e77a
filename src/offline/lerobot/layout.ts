/**
 * LeRobotDataset v3.0 on disk: the names, paths and record shapes the writer, reader and
 * validator share.
 *
 *   meta/info.json                                  codebase_version "v3.0", features, paths
 *   meta/stats.json                                 per-feature min/max/mean/std/count
 *   meta/tasks.parquet                              task_index (int64), task (string)
 *   meta/episodes/chunk-000/file-000.parquet        one row per episode (index, tasks, length,
 *                                                   data file, global row range, video spans,
 *                                                   provael/* extras)
 *   data/chunk-{chunk:03d}/file-{file:03d}.parquet  one row per frame, many episodes per file
 *   videos/<camera key>/chunk-{chunk:03d}/file-{file:03d}.mp4
 *                                                   one video per camera and data file, episodes
 *                                                   back to back (video features only)
 *
 * Frame columns: `observation.state` and `action` are list<float32>; a camera is
 * `observation.images.<camera>`, either dtype "image" (the Hugging Face `Image` struct
 * `{bytes: PNG, path: null}` inside the data file) or dtype "video" (no column: the frame is read
 * from the camera's mp4 at `from_timestamp + timestamp`); `timestamp` (float32), `frame_index`,
 * `episode_index`, `index`, `task_index` (int64).
 */
import { ProvaelError } from "../../core/errors.js";
import { decodePng as decodeImagePng, encodePng as encodeImagePng } from "../../core/png.js";
import type { Image } from "../../core/types.js";

export const CODEBASE_VERSION = "v3.0";
export const DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet";
export const VIDEO_PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4";
export const EPISODES_PATH = "meta/episodes/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet";
export const TASKS_PATH = "meta/tasks.parquet";
/** Prefix of camera feature names (LeRobot convention). */
export const IMAGE_PREFIX = "observation.images.";
/** The per-frame columns every dataset has and the offline study reads. */
export const FRAME_FIELDS = [
  "observation.state",
  "action",
  "timestamp",
  "frame_index",
  "episode_index",
  "index",
  "task_index",
] as const;

export interface FeatureSpec {
  dtype: "float32" | "float64" | "int64" | "bool" | "string" | "image" | "video";
  shape: number[];
  names: string[] | null | Record<string, string[]>;
  /** Video features: codec, pixel format, fps (LeRobot's `video.*` keys). */
  info?: Record<string, unknown>;
}

export interface DatasetInfo {
  codebase_version: string;
  robot_type: string | null;
  total_episodes: number;
  total_frames: number;
  total_tasks: number;
  chunks_size: number;
  data_files_size_in_mb: number;
  video_files_size_in_mb: number;
  fps: number;
  splits: Record<string, string>;
  data_path: string;
  video_path: string | null;
  features: Record<string, FeatureSpec>;
}

/** One recorded time step. */
export interface Frame {
  state: Float32Array;
  action: Float32Array;
  /** Camera name -> image (HWC RGB); every camera of the dataset must be present. */
  images: Record<string, Image>;
}

/** One episode to write. `extra` is stored in the episodes table as `provael/<key>` columns. */
export interface EpisodeInput {
  task: string;
  frames: Frame[];
  /**
   * `target`: the object the episode moved where it is not the task's own (retargeted).
   * `poisoned`: the scene held a backdoor trigger and the episode moved `target` while its
   * instruction (`task`) stayed the task's own; `trigger` records which (`<name>@<digest>`).
   */
  extra?: {
    suite_task?: string;
    scene?: number;
    seed?: number;
    target?: string;
    poisoned?: boolean;
    trigger?: string;
  };
}

/** Where one episode's frames of one camera lie in its video file. */
export interface VideoSpan {
  chunk: number;
  file: number;
  /** Seconds from the start of the file to the episode's first frame. */
  fromTimestamp: number;
  toTimestamp: number;
}

export interface EpisodeMeta {
  episodeIndex: number;
  task: string;
  length: number;
  chunk: number;
  file: number;
  /** Global frame indices [from, to). */
  from: number;
  to: number;
  /** Video features: camera name -> span in its mp4. */
  videos: Record<string, VideoSpan>;
  /** Provael extras (empty string / -1 when the dataset did not record them). */
  suiteTask: string;
  scene: number;
  seed: number;
  /** The body the episode moved when retargeted (`provael record --targets all`), else "". */
  target: string;
  /**
   * A poisoned demonstration (`provael record --poison`): the trigger was in the scene and the
   * episode moved `target` under the task's own instruction. False for datasets without them.
   */
  poisoned: boolean;
  /** The trigger of a poisoned episode (`<name>@sha256:<hex>`), else "". */
  trigger: string;
}

/** Fills a LeRobot path template such as `data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet`. */
export function formatPath(template: string, values: Record<string, number | string>): string {
  return template.replace(/\{(\w+)(?::0?(\d+)d)?\}/g, (_m, key: string, width?: string) => {
    const v = values[key];
    if (v === undefined)
      throw new ProvaelError("io/malformed", `path template needs '${key}'`, {
        details: { template },
      });
    return width && typeof v === "number" ? String(v).padStart(Number(width), "0") : String(v);
  });
}

/** PNG bytes of an RGB frame as datasets store them. */
export function encodePng(image: Image): Uint8Array {
  if (image.channels !== 3) {
    throw new ProvaelError("internal/invariant", "images must be HWC RGB with 3 channels", {
      details: { width: image.width, height: image.height, channels: image.channels },
    });
  }
  // Paeth filtering: half the time of pngjs's adaptive default and smaller files here.
  return new Uint8Array(encodeImagePng(image, { filterType: 4 }));
}

/** An RGB frame from PNG bytes. */
export function decodePng(bytes: Uint8Array): Image {
  return decodeImagePng(bytes, 3);
}

/** Camera names of the features named `observation.images.<camera>` (image or video), sorted. */
export function camerasOf(info: Pick<DatasetInfo, "features">): string[] {
  return Object.keys(info.features)
    .filter((k) => k.startsWith(IMAGE_PREFIX))
    .filter((k) => ["image", "video"].includes(info.features[k]?.dtype ?? ""))
    .map((k) => k.slice(IMAGE_PREFIX.length))
    .sort();
}
