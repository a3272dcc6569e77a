/**
 * Reads a LeRobotDataset v3.0 directory (ours from `provael record`, or LeRobot's): the metadata
 * at once, each episode's frames on demand. Image features are PNG cells of the data files;
 * video features are decoded by FFmpeg from the camera's mp4 at the episode's span (video.ts).
 *
 * @example
 *   const ds = await openDataset(dir);
 *   const ep = await ds.episode(0, { frames: [0, 10, 20] }); // images of three frames only
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { asyncBufferFromFile, parquetReadObjects } from "hyparquet";
import { ProvaelError } from "../../core/errors.js";
import type { Image } from "../../core/types.js";
import {
  CODEBASE_VERSION,
  camerasOf,
  type DatasetInfo,
  decodePng,
  type EpisodeMeta,
  formatPath,
  IMAGE_PREFIX,
  TASKS_PATH,
  type VideoSpan,
} from "./layout.js";
import { decodeFrames } from "./video.js";

export interface ReadFrame {
  state: Float32Array;
  action: Float32Array;
  /** Decoded images; empty when read with `images: false` or for frames not in `frames`. */
  images: Record<string, Image>;
  timestamp: number;
  frameIndex: number;
  index: number;
  taskIndex: number;
}

export interface ReadEpisode {
  meta: EpisodeMeta;
  frames: ReadFrame[];
}

export interface ReadOptions {
  /** Decode camera images (default true). */
  images?: boolean;
  /** Decode images only for these frame offsets within the episode (default: every frame). */
  frames?: readonly number[];
  /** Called on each decoded image (e.g. to downsample at once and keep memory low). */
  mapImage?: (camera: string, image: Image) => Image;
  /** Read only the first `maxFrames` frames of the episode. */
  maxFrames?: number;
}

export interface Dataset {
  dir: string;
  info: DatasetInfo;
  tasks: string[];
  episodes: EpisodeMeta[];
  /** Camera names (features named `observation.images.<camera>`), sorted. */
  cameras: string[];
  /** The cameras stored as video. */
  videoCameras: string[];
  /** The file of one camera's video for an episode (video cameras only). */
  videoFile(camera: string, meta: EpisodeMeta): string;
  /** The data file holding an episode's rows. */
  dataFile(meta: EpisodeMeta): string;
  episode(index: number, options?: ReadOptions): Promise<ReadEpisode>;
}

function num(v: unknown): number {
  return typeof v === "bigint" ? Number(v) : Number(v);
}

export function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new ProvaelError("io/read", `cannot read ${path}`, {
      cause: e,
      hint: "is it a LeRobotDataset v3.0 directory (meta/info.json)?",
    });
  }
}

export async function readTable(
  path: string,
  options: { columns?: string[]; rowStart?: number; rowEnd?: number } = {},
) {
  if (!existsSync(path)) throw new ProvaelError("io/read", `missing ${path}`);
  const file = await asyncBufferFromFile(path);
  return (await parquetReadObjects({ file, utf8: false, ...options })) as Record<string, unknown>[];
}

function imageBytes(v: unknown): Uint8Array {
  const bytes = (v as { bytes?: unknown } | null)?.bytes;
  if (bytes instanceof Uint8Array) return bytes;
  if (typeof bytes === "string") return new Uint8Array(Buffer.from(bytes, "latin1"));
  throw new ProvaelError("io/malformed", "an image cell holds no PNG bytes");
}

/** The episodes tables' files in order. */
export function episodeFiles(dir: string): string[] {
  const epDir = join(dir, "meta", "episodes");
  return existsSync(epDir)
    ? readdirSync(epDir)
        .sort()
        .flatMap((c) =>
          readdirSync(join(epDir, c))
            .filter((f) => f.endsWith(".parquet"))
            .sort()
            .map((f) => join(epDir, c, f)),
        )
    : [];
}

/** Opens a LeRobotDataset v3.0 directory (see layout.ts); metadata only, frames on demand. */
export async function openDataset(dir: string): Promise<Dataset> {
  const info = readJson(join(dir, "meta", "info.json")) as DatasetInfo;
  if (info.codebase_version !== CODEBASE_VERSION) {
    throw new ProvaelError(
      "io/malformed",
      `${dir} is LeRobotDataset ${info.codebase_version}, not v3.0`,
      { hint: "convert it with LeRobot's v2.1 -> v3.0 conversion script first" },
    );
  }
  const taskRows = await readTable(join(dir, TASKS_PATH));
  const tasks: string[] = [];
  for (const r of taskRows) tasks[num(r.task_index)] = String(r.task ?? r.__index_level_0__);
  const cameras = camerasOf(info);
  const videoCameras = cameras.filter((c) => info.features[IMAGE_PREFIX + c]?.dtype === "video");
  const episodes: EpisodeMeta[] = [];
  for (const f of episodeFiles(dir)) {
    for (const r of await readTable(f)) {
      const t = r.tasks;
      const videos: Record<string, VideoSpan> = {};
      for (const cam of videoCameras) {
        const key = `videos/${IMAGE_PREFIX}${cam}`;
        if (r[`${key}/chunk_index`] === undefined) continue;
        videos[cam] = {
          chunk: num(r[`${key}/chunk_index`]),
          file: num(r[`${key}/file_index`]),
          fromTimestamp: num(r[`${key}/from_timestamp`]),
          toTimestamp: num(r[`${key}/to_timestamp`]),
        };
      }
      episodes.push({
        episodeIndex: num(r.episode_index),
        task: Array.isArray(t) ? String(t[0]) : String(t),
        length: num(r.length),
        chunk: num(r["data/chunk_index"]),
        file: num(r["data/file_index"]),
        from: num(r.dataset_from_index),
        to: num(r.dataset_to_index),
        videos,
        suiteTask: typeof r["provael/task"] === "string" ? (r["provael/task"] as string) : "",
        scene: r["provael/scene"] === undefined ? -1 : num(r["provael/scene"]),
        seed: r["provael/seed"] === undefined ? -1 : num(r["provael/seed"]),
        target: typeof r["provael/target"] === "string" ? (r["provael/target"] as string) : "",
        poisoned: r["provael/poisoned"] === true,
        trigger: typeof r["provael/trigger"] === "string" ? (r["provael/trigger"] as string) : "",
      });
    }
  }
  episodes.sort((a, b) => a.episodeIndex - b.episodeIndex);
  // Global index of each data file's first row, so an episode maps to a row range in its file.
  const fileStart = new Map<string, number>();
  for (const e of episodes) {
    const key = `${e.chunk}/${e.file}`;
    fileStart.set(key, Math.min(fileStart.get(key) ?? Infinity, e.from));
  }
  const dataFile = (meta: EpisodeMeta) =>
    join(dir, formatPath(info.data_path, { chunk_index: meta.chunk, file_index: meta.file }));
  const videoFile = (camera: string, meta: EpisodeMeta) => {
    const span = meta.videos[camera];
    if (!span || !info.video_path) {
      throw new ProvaelError(
        "io/malformed",
        `episode ${meta.episodeIndex} has no video span for camera '${camera}'`,
        { hint: "the episodes table lacks the videos/<camera>/* columns" },
      );
    }
    return join(
      dir,
      formatPath(info.video_path, {
        video_key: IMAGE_PREFIX + camera,
        chunk_index: span.chunk,
        file_index: span.file,
      }),
    );
  };
  return {
    dir,
    info,
    tasks,
    episodes,
    cameras,
    videoCameras,
    videoFile,
    dataFile,
    async episode(index, options = {}) {
      const meta = episodes[index];
      if (!meta) {
        throw new ProvaelError(
          "config/invalid",
          `episode ${index} is out of range (0..${episodes.length - 1})`,
        );
      }
      const withImages = options.images ?? true;
      const start = fileStart.get(`${meta.chunk}/${meta.file}`) ?? meta.from;
      const pngCameras = cameras.filter((c) => !videoCameras.includes(c));
      const columns = [
        "observation.state",
        "action",
        "timestamp",
        "frame_index",
        "index",
        "task_index",
        ...(withImages ? pngCameras.map((c) => IMAGE_PREFIX + c) : []),
      ];
      const count = Math.min(meta.length, options.maxFrames ?? meta.length);
      const rows = await readTable(dataFile(meta), {
        columns,
        rowStart: meta.from - start,
        rowEnd: meta.from + count - start,
      });
      const wanted = new Set(options.frames ?? rows.map((_, k) => k));
      const frames: ReadFrame[] = rows.map((r, k) => {
        const images: Record<string, Image> = {};
        if (withImages && wanted.has(k)) {
          for (const cam of pngCameras) {
            const img = decodePng(imageBytes(r[IMAGE_PREFIX + cam]));
            images[cam] = options.mapImage ? options.mapImage(cam, img) : img;
          }
        }
        return {
          state: Float32Array.from(r["observation.state"] as number[]),
          action: Float32Array.from(r.action as number[]),
          images,
          timestamp: num(r.timestamp),
          frameIndex: num(r.frame_index),
          index: num(r.index),
          taskIndex: num(r.task_index),
        };
      });
      if (withImages && videoCameras.length > 0) {
        const offsets = [...wanted].filter((k) => k >= 0 && k < frames.length);
        for (const cam of videoCameras) {
          const shape = info.features[IMAGE_PREFIX + cam]?.shape ?? [];
          const span = meta.videos[cam];
          const decoded = await decodeFrames(videoFile(cam, meta), {
            fromTimestamp: span?.fromTimestamp ?? 0,
            fps: info.fps,
            height: shape[0] as number,
            width: shape[1] as number,
            offsets,
          });
          for (const [k, img] of decoded) {
            (frames[k] as ReadFrame).images[cam] = options.mapImage
              ? options.mapImage(cam, img)
              : img;
          }
        }
      }
      return { meta, frames };
    },
  };
}
