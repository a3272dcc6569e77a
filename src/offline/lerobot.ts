/**
 * LeRobotDataset v3.0 on disk: a writer, a reader and a validator.
 *
 * Layout (as written here; the same reader serves the offline study):
 *
 *   meta/info.json                                  codebase_version "v3.0", features, paths
 *   meta/stats.json                                 per-feature min/max/mean/std/count
 *   meta/tasks.parquet                              task_index (int64), task (string)
 *   meta/episodes/chunk-000/file-000.parquet        one row per episode (index, tasks, length,
 *                                                   data file, global row range, provael/* extras)
 *   data/chunk-{chunk:03d}/file-{file:03d}.parquet  one row per frame, many episodes per file
 *
 * Frame columns: `observation.state` and `action` are list<float32>; each camera is
 * `observation.images.<camera>` with dtype "image", stored as the Hugging Face `Image` struct
 * `{bytes: PNG, path: null}` inside the data file (LeRobot's layout when videos are off);
 * `timestamp` (float32), `frame_index`, `episode_index`, `index`, `task_index` (int64).
 *
 * @example
 *   const w = new LeRobotWriter(dir, { robotType: "provael_arm6", fps: 20, cameras: { agentview: [128, 128] }, stateNames, actionNames });
 *   await w.addEpisode({ task: "pick up the red block", frames });
 *   await w.finish();
 *   const ds = await openDataset(dir);
 *   const ep = await ds.episode(0);
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { asyncBufferFromFile, parquetReadObjects } from "hyparquet";
import { parquetWriteFile } from "hyparquet-writer";
import { ProvaelError } from "../core/errors.js";
import { decodePng as decodeImagePng, encodePng as encodeImagePng } from "../core/png.js";
import type { Image } from "../core/types.js";

export const CODEBASE_VERSION = "v3.0";
export const DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet";
export const EPISODES_PATH = "meta/episodes/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet";
export const TASKS_PATH = "meta/tasks.parquet";
/** Prefix of camera feature names (LeRobot convention). */
export const IMAGE_PREFIX = "observation.images.";

export interface FeatureSpec {
  dtype: "float32" | "float64" | "int64" | "bool" | "string" | "image" | "video";
  shape: number[];
  names: string[] | null | Record<string, string[]>;
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
  extra?: { suite_task?: string; scene?: number; seed?: number };
}

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

interface PendingFrame {
  state: number[];
  action: number[];
  images: Uint8Array[];
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
  suiteTask: string;
  scene: number;
  seed: number;
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
        return encodePng(img);
      });
      addStat(this.stats.get("observation.state") as Stat, f.state);
      addStat(this.stats.get("action") as Stat, f.action);
      this.pending.push({
        state: Array.from(f.state),
        action: Array.from(f.action),
        images,
        timestamp: i / fps,
        frameIndex: i,
        episodeIndex,
        index: this.frames + i,
        taskIndex,
      });
      this.pendingBytes += images.reduce((s, b) => s + b.byteLength, 0) + 4 * 32;
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
      suiteTask: episode.extra?.suite_task ?? "",
      scene: episode.extra?.scene ?? -1,
      seed: episode.extra?.seed ?? -1,
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
    const columnData = [
      { name: "observation.state", data: rows.map((r) => r.state) },
      { name: "action", data: rows.map((r) => r.action) },
      ...this.cameras.map((cam, k) => ({
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
      ...this.cameras.flatMap((cam) => imageStruct(IMAGE_PREFIX + cam)),
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
      { name: "provael/task", data: eps.map((e) => e.suiteTask) },
      { name: "provael/scene", data: big((e) => e.scene) },
      { name: "provael/seed", data: big((e) => e.seed) },
    ];
    const int64 = (name: string) => ({
      name,
      type: "INT64" as const,
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
        utf8("provael/task"),
        int64("provael/scene"),
        int64("provael/seed"),
      ],
    });
    const { stateNames, actionNames, cameras, fps, robotType } = this.options;
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
      features[IMAGE_PREFIX + cam] = {
        dtype: "image",
        shape: [h, w, 3],
        names: ["height", "width", "channels"],
      };
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
      video_path: null,
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

// ---------------------------------------------------------------------------------------------
// Reading

export interface EpisodeMeta {
  episodeIndex: number;
  task: string;
  length: number;
  chunk: number;
  file: number;
  /** Global frame indices [from, to). */
  from: number;
  to: number;
  /** Provael extras (empty string / -1 when the dataset did not record them). */
  suiteTask: string;
  scene: number;
  seed: number;
}

export interface ReadFrame {
  state: Float32Array;
  action: Float32Array;
  /** Decoded images, or undefined when read with `images: false`. */
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
  episode(index: number, options?: ReadOptions): Promise<ReadEpisode>;
}

function num(v: unknown): number {
  return typeof v === "bigint" ? Number(v) : Number(v);
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new ProvaelError("io/read", `cannot read ${path}`, {
      cause: e,
      hint: "is it a LeRobotDataset v3.0 directory (meta/info.json)?",
    });
  }
}

async function readTable(
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

/** Opens a LeRobotDataset v3.0 directory written by this module (or by LeRobot without videos). */
export async function openDataset(dir: string): Promise<Dataset> {
  const info = readJson(join(dir, "meta", "info.json")) as DatasetInfo;
  if (info.codebase_version !== CODEBASE_VERSION) {
    throw new ProvaelError(
      "io/malformed",
      `${dir} is LeRobotDataset ${info.codebase_version}, not v3.0`,
    );
  }
  const taskRows = await readTable(join(dir, TASKS_PATH));
  const tasks: string[] = [];
  for (const r of taskRows) tasks[num(r.task_index)] = String(r.task ?? r.__index_level_0__);
  const episodes: EpisodeMeta[] = [];
  const epDir = join(dir, "meta", "episodes");
  const epFiles = existsSync(epDir)
    ? readdirSync(epDir)
        .sort()
        .flatMap((c) =>
          readdirSync(join(epDir, c))
            .filter((f) => f.endsWith(".parquet"))
            .sort()
            .map((f) => join(epDir, c, f)),
        )
    : [];
  for (const f of epFiles) {
    for (const r of await readTable(f)) {
      const t = r.tasks;
      episodes.push({
        episodeIndex: num(r.episode_index),
        task: Array.isArray(t) ? String(t[0]) : String(t),
        length: num(r.length),
        chunk: num(r["data/chunk_index"]),
        file: num(r["data/file_index"]),
        from: num(r.dataset_from_index),
        to: num(r.dataset_to_index),
        suiteTask: typeof r["provael/task"] === "string" ? (r["provael/task"] as string) : "",
        scene: r["provael/scene"] === undefined ? -1 : num(r["provael/scene"]),
        seed: r["provael/seed"] === undefined ? -1 : num(r["provael/seed"]),
      });
    }
  }
  episodes.sort((a, b) => a.episodeIndex - b.episodeIndex);
  const cameras = Object.keys(info.features)
    .filter((k) => k.startsWith(IMAGE_PREFIX) && info.features[k]?.dtype === "image")
    .map((k) => k.slice(IMAGE_PREFIX.length))
    .sort();
  // Global index of each data file's first row, so an episode maps to a row range in its file.
  const fileStart = new Map<string, number>();
  for (const e of episodes) {
    const key = `${e.chunk}/${e.file}`;
    fileStart.set(key, Math.min(fileStart.get(key) ?? Infinity, e.from));
  }
  return {
    dir,
    info,
    tasks,
    episodes,
    cameras,
    async episode(index, options = {}) {
      const meta = episodes[index];
      if (!meta) {
        throw new ProvaelError(
          "config/invalid",
          `episode ${index} is out of range (0..${episodes.length - 1})`,
        );
      }
      const withImages = options.images ?? true;
      const path = join(
        dir,
        formatPath(info.data_path, { chunk_index: meta.chunk, file_index: meta.file }),
      );
      const start = fileStart.get(`${meta.chunk}/${meta.file}`) ?? meta.from;
      const columns = [
        "observation.state",
        "action",
        "timestamp",
        "frame_index",
        "index",
        "task_index",
        ...(withImages ? cameras.map((c) => IMAGE_PREFIX + c) : []),
      ];
      const rows = await readTable(path, {
        columns,
        rowStart: meta.from - start,
        rowEnd: Math.min(meta.to, meta.from + (options.maxFrames ?? meta.length)) - start,
      });
      const frames = rows.map((r) => {
        const images: Record<string, Image> = {};
        if (withImages) {
          for (const cam of cameras) {
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
      return { meta, frames };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Validation

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
