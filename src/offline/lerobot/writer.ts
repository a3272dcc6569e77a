/**
 * Writes a LeRobotDataset v3.0 directory episode by episode (layout.ts names the files). Camera
 * streams are stored as PNG images inside the data files, or with `video` as one mp4 per camera
 * and data file, encoded by FFmpeg (video.ts), the way LeRobot stores real-robot recordings.
 *
 * @example
 *   const w = new LeRobotWriter(dir, { robotType: "provael_arm6", fps: 20, cameras: { agentview: [128, 128] }, stateNames, actionNames });
 *   w.addEpisode({ task: "pick up the red block", frames });
 *   w.finish();
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parquetWriteFile } from "hyparquet-writer";
import { ProvaelError } from "../../core/errors.js";
import type { Image } from "../../core/types.js";
import {
  CODEBASE_VERSION,
  DATA_PATH,
  type DatasetInfo,
  EPISODES_PATH,
  type EpisodeInput,
  encodePng,
  type FeatureSpec,
  formatPath,
  IMAGE_PREFIX,
  TASKS_PATH,
  VIDEO_PATH,
} from "./layout.js";
import { type EncodeOptions, encodeVideo } from "./video.js";

export interface WriterOptions {
  robotType: string;
  fps: number;
  /** Camera name -> [height, width]. */
  cameras: Record<string, [number, number]>;
  stateNames: string[];
  actionNames: string[];
  /** Episodes per chunk directory (LeRobot default 1000). */
  chunksSize?: number;
  /** Start a new data file once the current one holds this many MB of images (default 100). */
  dataFileSizeMb?: number;
  /** Store the cameras as mp4 video (FFmpeg) instead of PNG images in the data files. */
  video?: Omit<EncodeOptions, "fps">;
}

interface Stat {
  min: number[];
  max: number[];
  sum: number[];
  sumSq: number[];
  count: number;
}

function newStat(n: number): Stat {
  return {
    min: new Array(n).fill(Infinity),
    max: new Array(n).fill(-Infinity),
    sum: new Array(n).fill(0),
    sumSq: new Array(n).fill(0),
    count: 0,
  };
}

function addStat(s: Stat, v: ArrayLike<number>): void {
  for (let i = 0; i < s.min.length; i++) {
    const x = v[i] ?? 0;
    if (x < (s.min[i] as number)) s.min[i] = x;
    if (x > (s.max[i] as number)) s.max[i] = x;
    s.sum[i] = (s.sum[i] as number) + x;
    s.sumSq[i] = (s.sumSq[i] as number) + x * x;
  }
  s.count++;
}

/** Per-channel image statistics on [0, 1] values, folded into `s` (one entry per channel). */
function addImageStat(s: Stat, img: Image): void {
  const c = img.channels;
  const sums = new Array(c).fill(0);
  const sq = new Array(c).fill(0);
  const n = img.width * img.height;
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < c; k++) {
      const x = (img.data[i * c + k] as number) / 255;
      sums[k] += x;
      sq[k] += x * x;
      if (x < (s.min[k] as number)) s.min[k] = x;
      if (x > (s.max[k] as number)) s.max[k] = x;
    }
  }
  for (let k = 0; k < c; k++) {
    s.sum[k] = (s.sum[k] as number) + sums[k] / n;
    s.sumSq[k] = (s.sumSq[k] as number) + sq[k] / n;
  }
  s.count++;
}

function finishStat(s: Stat, image: boolean): Record<string, unknown> {
  const mean = s.sum.map((x) => x / Math.max(1, s.count));
  const std = s.sumSq.map((x, i) =>
    Math.sqrt(Math.max(0, x / Math.max(1, s.count) - (mean[i] as number) ** 2)),
  );
  // LeRobot stores image statistics with shape [C, 1, 1] so they broadcast over CHW tensors.
  const shape = (v: number[]) => (image ? v.map((x) => [[x]]) : v);
  return {
    min: shape(s.min),
    max: shape(s.max),
    mean: shape(mean),
    std: shape(std),
    count: [s.count],
  };
}

interface PendingFrame {
  state: number[];
  action: number[];
  /** PNG bytes per camera (image features), empty with video. */
  images: Uint8Array[];
  /** Raw frames per camera (video features), empty without video. */
  raw: Image[];
  timestamp: number;
  frameIndex: number;
  episodeIndex: number;
  index: number;
  taskIndex: number;
}

interface EpisodeRow {
  episode_index: number;
  tasks: string[];
  length: number;
  chunk: number;
  file: number;
  from: number;
  to: number;
  /** Frame offset of the episode's first frame in its data (and video) file. */
  offset: number;
  suiteTask: string;
  scene: number;
  seed: number;
  target: string;
  poisoned: boolean;
  trigger: string;
}

/** Writes a LeRobotDataset v3.0 directory episode by episode; call `finish()` once at the end. */
export class LeRobotWriter {
  private readonly cameras: string[];
  private readonly chunksSize: number;
  private readonly fileLimit: number;
  private readonly tasks: string[] = [];
  private readonly episodes: EpisodeRow[] = [];
  private pending: PendingFrame[] = [];
  private pendingBytes = 0;
  private chunk = 0;
  private file = 0;
  private frames = 0;
  /** Global index of the current data file's first frame. */
  private fileFrom = 0;
  private readonly stats = new Map<string, Stat>();
  private finished = false;

  constructor(
    readonly dir: string,
    readonly options: WriterOptions,
  ) {
    if (existsSync(join(dir, "meta", "info.json"))) {
      throw new ProvaelError("run/out-exists", `${dir} already holds a dataset`, {
        hint: "choose a new --out directory",
      });
    }
    this.cameras = Object.keys(options.cameras).sort();
    this.chunksSize = options.chunksSize ?? 1000;
    this.fileLimit = (options.dataFileSizeMb ?? 100) * 1024 * 1024;
    this.stats.set("observation.state", newStat(options.stateNames.length));
    this.stats.set("action", newStat(options.actionNames.length));
    for (const cam of this.cameras) this.stats.set(IMAGE_PREFIX + cam, newStat(3));
    mkdirSync(dir, { recursive: true });
  }

  /** Number of episodes added so far. */
  get episodeCount(): number {
    return this.episodes.length;
  }

  addEpisode(episode: EpisodeInput): void {
    if (this.finished) throw new ProvaelError("internal/invariant", "writer already finished");
    if (episode.frames.length === 0) {
      throw new ProvaelError("internal/invariant", "an episode needs at least one frame");
    }
    let taskIndex = this.tasks.indexOf(episode.task);
    if (taskIndex < 0) {
      taskIndex = this.tasks.length;
      this.tasks.push(episode.task);
    }
    const episodeIndex = this.episodes.length;
    const from = this.frames;
    const { stateNames, actionNames, fps } = this.options;
    episode.frames.forEach((f, i) => {
      if (f.state.length !== stateNames.length || f.action.length !== actionNames.length) {
        throw new ProvaelError(
          "internal/invariant",
          "frame vector size differs from the features",
          {
            details: { state: f.state.length, action: f.action.length },
          },
        );
      }
      const images = this.cameras.map((cam) => {
        const img = f.images[cam];
        const [h, w] = this.options.cameras[cam] as [number, number];
        if (!img || img.width !== w || img.height !== h) {
          throw new ProvaelError("internal/invariant", `frame lacks a ${w}x${h} '${cam}' image`, {
            details: { camera: cam, width: img?.width, height: img?.height },
          });
        }
        addImageStat(this.stats.get(IMAGE_PREFIX + cam) as Stat, img);
        return img;
      });
      const video = this.options.video !== undefined;
      addStat(this.stats.get("observation.state") as Stat, f.state);
      addStat(this.stats.get("action") as Stat, f.action);
      this.pending.push({
        state: Array.from(f.state),
        action: Array.from(f.action),
        images: video ? [] : images.map(encodePng),
        raw: video ? images.map((img) => ({ ...img, data: img.data.slice() })) : [],
        timestamp: i / fps,
        frameIndex: i,
        episodeIndex,
        index: this.frames + i,
        taskIndex,
      });
      // Video frames wait raw for their encoder: counted raw, so memory stays within the limit.
      const last = this.pending[this.pending.length - 1] as PendingFrame;
      this.pendingBytes +=
        (video
          ? last.raw.reduce((s, b) => s + b.data.byteLength, 0)
          : last.images.reduce((s, b) => s + b.byteLength, 0)) +
        4 * 32;
    });
    this.frames += episode.frames.length;
    this.episodes.push({
      episode_index: episodeIndex,
      tasks: [episode.task],
      length: episode.frames.length,
      chunk: this.chunk,
      file: this.file,
      from,
      to: this.frames,
      offset: from - this.fileFrom,
      suiteTask: episode.extra?.suite_task ?? "",
      scene: episode.extra?.scene ?? -1,
      seed: episode.extra?.seed ?? -1,
      target: episode.extra?.target ?? "",
      poisoned: episode.extra?.poisoned ?? false,
      trigger: episode.extra?.trigger ?? "",
    });
    // Whole episodes per file: a file is closed only between episodes.
    if (this.pendingBytes >= this.fileLimit) this.flush();
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    const path = join(
      this.dir,
      formatPath(DATA_PATH, { chunk_index: this.chunk, file_index: this.file }),
    );
    mkdirSync(dirname(path), { recursive: true });
    const rows = this.pending;
    const video = this.options.video;
    if (video) {
      this.cameras.forEach((cam, k) => {
        const file = join(
          this.dir,
          formatPath(VIDEO_PATH, {
            video_key: IMAGE_PREFIX + cam,
            chunk_index: this.chunk,
            file_index: this.file,
          }),
        );
        mkdirSync(dirname(file), { recursive: true });
        encodeVideo(
          file,
          rows.map((r) => r.raw[k] as Image),
          { ...video, fps: this.options.fps },
        );
      });
    }
    const imageCameras = video ? [] : this.cameras;
    const columnData = [
      { name: "observation.state", data: rows.map((r) => r.state) },
      { name: "action", data: rows.map((r) => r.action) },
      ...imageCameras.map((cam, k) => ({
        name: IMAGE_PREFIX + cam,
        data: rows.map((r) => ({ bytes: r.images[k] as Uint8Array, path: null })),
      })),
      { name: "timestamp", data: Float32Array.from(rows.map((r) => r.timestamp)) },
      { name: "frame_index", data: BigInt64Array.from(rows.map((r) => BigInt(r.frameIndex))) },
      { name: "episode_index", data: BigInt64Array.from(rows.map((r) => BigInt(r.episodeIndex))) },
      { name: "index", data: BigInt64Array.from(rows.map((r) => BigInt(r.index))) },
      { name: "task_index", data: BigInt64Array.from(rows.map((r) => BigInt(r.taskIndex))) },
    ];
    const schema = [
      { name: "root", num_children: columnData.length },
      ...floatList("observation.state"),
      ...floatList("action"),
      ...imageCameras.flatMap((cam) => imageStruct(IMAGE_PREFIX + cam)),
      { name: "timestamp", type: "FLOAT" as const, repetition_type: "REQUIRED" as const },
      ...["frame_index", "episode_index", "index", "task_index"].map((name) => ({
        name,
        type: "INT64" as const,
        repetition_type: "REQUIRED" as const,
      })),
    ];
    parquetWriteFile({
      filename: path,
      columnData: columnData.map((c) =>
        c.name.startsWith(IMAGE_PREFIX) ? { ...c, statistics: false } : c,
      ),
      schema,
      rowGroupSize: 1000,
    });
    this.pending = [];
    this.pendingBytes = 0;
    this.fileFrom = this.frames;
    this.file++;
    if (this.file >= this.chunksSize) {
      this.chunk++;
      this.file = 0;
    }
  }

  /** Writes the last data file and the metadata; returns the dataset's info. */
  finish(): DatasetInfo {
    if (this.finished) throw new ProvaelError("internal/invariant", "writer already finished");
    this.flush();
    this.finished = true;
    const meta = join(this.dir, "meta");
    mkdirSync(join(meta, "episodes", "chunk-000"), { recursive: true });
    parquetWriteFile({
      filename: join(this.dir, TASKS_PATH),
      columnData: [
        { name: "task_index", data: BigInt64Array.from(this.tasks.map((_, i) => BigInt(i))) },
        { name: "task", data: this.tasks, type: "STRING" },
      ],
    });
    const eps = this.episodes;
    const { stateNames, actionNames, cameras, fps, robotType } = this.options;
    const video = this.options.video;
    const videoKeys = video ? this.cameras.map((c) => IMAGE_PREFIX + c) : [];
    const retargeted = eps.some((e) => e.target !== "");
    const poisoned = eps.some((e) => e.poisoned);
    const big = (f: (e: EpisodeRow) => number) => BigInt64Array.from(eps.map((e) => BigInt(f(e))));
    const epColumns = [
      { name: "episode_index", data: big((e) => e.episode_index) },
      { name: "tasks", data: eps.map((e) => e.tasks) },
      { name: "length", data: big((e) => e.length) },
      { name: "data/chunk_index", data: big((e) => e.chunk) },
      { name: "data/file_index", data: big((e) => e.file) },
      { name: "dataset_from_index", data: big((e) => e.from) },
      { name: "dataset_to_index", data: big((e) => e.to) },
      { name: "meta/episodes/chunk_index", data: big(() => 0) },
      { name: "meta/episodes/file_index", data: big(() => 0) },
      ...videoKeys.flatMap((key) => [
        { name: `videos/${key}/chunk_index`, data: big((e) => e.chunk) },
        { name: `videos/${key}/file_index`, data: big((e) => e.file) },
        { name: `videos/${key}/from_timestamp`, data: eps.map((e) => e.offset / fps) },
        { name: `videos/${key}/to_timestamp`, data: eps.map((e) => (e.offset + e.length) / fps) },
      ]),
      { name: "provael/task", data: eps.map((e) => e.suiteTask) },
      { name: "provael/scene", data: big((e) => e.scene) },
      { name: "provael/seed", data: big((e) => e.seed) },
      // Only datasets with retargeted episodes carry the column: older ones keep their bytes.
      ...(retargeted ? [{ name: "provael/target", data: eps.map((e) => e.target) }] : []),
      // Likewise only datasets with poisoned episodes carry these two.
      ...(poisoned
        ? [
            { name: "provael/poisoned", data: eps.map((e) => e.poisoned) },
            { name: "provael/trigger", data: eps.map((e) => e.trigger) },
          ]
        : []),
    ];
    const int64 = (name: string) => ({
      name,
      type: "INT64" as const,
      repetition_type: "REQUIRED" as const,
    });
    const double = (name: string) => ({
      name,
      type: "DOUBLE" as const,
      repetition_type: "REQUIRED" as const,
    });
    const utf8 = (name: string) => ({
      name,
      type: "BYTE_ARRAY" as const,
      converted_type: "UTF8" as const,
      repetition_type: "REQUIRED" as const,
    });
    parquetWriteFile({
      filename: join(this.dir, formatPath(EPISODES_PATH, { chunk_index: 0, file_index: 0 })),
      columnData: epColumns,
      schema: [
        { name: "root", num_children: epColumns.length },
        int64("episode_index"),
        { name: "tasks", repetition_type: "REQUIRED", converted_type: "LIST", num_children: 1 },
        { name: "list", repetition_type: "REPEATED", num_children: 1 },
        { ...utf8("element") },
        ...[
          "length",
          "data/chunk_index",
          "data/file_index",
          "dataset_from_index",
          "dataset_to_index",
          "meta/episodes/chunk_index",
          "meta/episodes/file_index",
        ].map(int64),
        ...videoKeys.flatMap((key) => [
          int64(`videos/${key}/chunk_index`),
          int64(`videos/${key}/file_index`),
          double(`videos/${key}/from_timestamp`),
          double(`videos/${key}/to_timestamp`),
        ]),
        utf8("provael/task"),
        int64("provael/scene"),
        int64("provael/seed"),
        ...(retargeted ? [utf8("provael/target")] : []),
        ...(poisoned
          ? [
              {
                name: "provael/poisoned",
                type: "BOOLEAN" as const,
                repetition_type: "REQUIRED" as const,
              },
              utf8("provael/trigger"),
            ]
          : []),
      ],
    });
    const scalar = (dtype: FeatureSpec["dtype"]): FeatureSpec => ({
      dtype,
      shape: [1],
      names: null,
    });
    const features: Record<string, FeatureSpec> = {
      "observation.state": { dtype: "float32", shape: [stateNames.length], names: stateNames },
      action: { dtype: "float32", shape: [actionNames.length], names: actionNames },
    };
    for (const cam of this.cameras) {
      const [h, w] = cameras[cam] as [number, number];
      features[IMAGE_PREFIX + cam] = video
        ? {
            dtype: "video",
            shape: [h, w, 3],
            names: ["height", "width", "channels"],
            info: {
              "video.height": h,
              "video.width": w,
              "video.codec": video.codec ?? "h264",
              "video.pix_fmt": "yuv420p",
              "video.is_depth_map": false,
              "video.fps": fps,
              "video.channels": 3,
              has_audio: false,
            },
          }
        : { dtype: "image", shape: [h, w, 3], names: ["height", "width", "channels"] };
    }
    Object.assign(features, {
      timestamp: scalar("float32"),
      frame_index: scalar("int64"),
      episode_index: scalar("int64"),
      index: scalar("int64"),
      task_index: scalar("int64"),
    });
    const info: DatasetInfo = {
      codebase_version: CODEBASE_VERSION,
      robot_type: robotType,
      total_episodes: eps.length,
      total_frames: this.frames,
      total_tasks: this.tasks.length,
      chunks_size: this.chunksSize,
      data_files_size_in_mb: Math.round(this.fileLimit / (1024 * 1024)),
      video_files_size_in_mb: 200,
      fps,
      splits: { train: `0:${eps.length}` },
      data_path: DATA_PATH,
      video_path: video ? VIDEO_PATH : null,
      features,
    };
    const stats: Record<string, unknown> = {};
    for (const [name, s] of this.stats) stats[name] = finishStat(s, name.startsWith(IMAGE_PREFIX));
    writeFileSync(join(meta, "info.json"), `${JSON.stringify(info, null, 2)}\n`);
    writeFileSync(join(meta, "stats.json"), `${JSON.stringify(stats, null, 2)}\n`);
    return info;
  }
}

function floatList(name: string) {
  return [
    {
      name,
      repetition_type: "REQUIRED" as const,
      converted_type: "LIST" as const,
      num_children: 1,
    },
    { name: "list", repetition_type: "REPEATED" as const, num_children: 1 },
    { name: "element", type: "FLOAT" as const, repetition_type: "REQUIRED" as const },
  ];
}

/** The Hugging Face `datasets.Image` struct: PNG bytes and an optional path. */
function imageStruct(name: string) {
  return [
    { name, repetition_type: "REQUIRED" as const, num_children: 2 },
    { name: "bytes", type: "BYTE_ARRAY" as const, repetition_type: "OPTIONAL" as const },
    {
      name: "path",
      type: "BYTE_ARRAY" as const,
      converted_type: "UTF8" as const,
      repetition_type: "OPTIONAL" as const,
    },
  ];
}
