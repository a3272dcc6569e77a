/**
 * Turns a LeRobotDataset v3.0 of demonstrations into the compact training set tiny-vla learns
 * from: both cameras area-resized to the network's input size, states, the instruction's text
 * unit ids (v1 words or subword units) and, per frame, the chunk of the next `chunk` actions
 * (the episode's last action repeated past its end).
 *
 * @example
 *   const ds = await openDataset(dir);
 *   const { set, text, stats } = await buildTrainingSet([ds], { imageSize: 64, chunk: 4, maxTokens: 16 });
 */
import { closeSync, existsSync, openSync, readSync, writeSync } from "node:fs";
import { ProvaelError } from "../core/errors.js";
import type { Image } from "../core/types.js";
import { FrameStore } from "../policies/tiny-vla/frame-store.js";
import {
  resizeArea,
  stateFeatureDim,
  stateFeatures,
  type TinyVlaConfig,
} from "../policies/tiny-vla/model.js";
import type { SubwordConfig } from "../policies/tiny-vla/subword.js";
import { buildTextUnits, textUnitsFromJson } from "../policies/tiny-vla/text-encoders.js";
import {
  encodeAll,
  type TextUnits,
  type TextUnitsJson,
  unitsLayout,
} from "../policies/tiny-vla/text-units.js";
import type { TokenizerJson } from "../policies/tiny-vla/tokenizer.js";
import { TRAIN_DEFAULTS, type TrainingSet } from "../policies/tiny-vla/train.js";
import type { Dataset, EpisodeMeta } from "./lerobot.js";

export interface BuildOptions {
  imageSize: number;
  chunk: number;
  /** Words kept of an instruction by the word tokenizer. */
  maxTokens: number;
  /** Subword text units with this config instead of the v1 word tokenizer. */
  subword?: SubwordConfig;
  /**
   * Words the word tokenizer's vocabulary holds besides the instructions' own: those of the
   * grammar's phrasings, when training reads the goals said a new way (grammar-phrasings.ts).
   */
  vocabulary?: readonly string[];
  /** Cameras in network order (default: the dataset's, sorted). */
  cameras?: string[];
  /** How the network reads the state (its statistics are of these features). */
  stateFeatures?: TinyVlaConfig["stateFeatures"];
  /** Keep every `stride`-th frame of each episode (chunks still use every action). */
  stride?: number;
  /**
   * The world (x, y) of the object an episode's instruction names, when known (from its stored
   * scene): frames before the first gripper close then get the object's position relative to
   * the gripper as an auxiliary localisation target.
   */
  auxTarget?: (meta: EpisodeMeta) => [number, number] | undefined;
  /** Per dataset, only these episodes (default: all). */
  episodes?: number[][];
  /** Frames per block of each camera's store (default: 1 GiB of them; tests use a few). */
  framesPerBlock?: number;
  onProgress?: (done: number, total: number) => void;
}

export interface TrainingStats {
  /** Mean and spread of the state features. */
  stateMean: number[];
  stateStd: number[];
  /** Spread of each action dim (std, at least 0.05), the unit of the movement loss. */
  actionScale: number[];
  /** Spread of each auxiliary target (std, at least 0.02 m), when there are any. */
  auxScale?: number[];
}

export interface BuiltTrainingSet {
  set: TrainingSet;
  text: TextUnits;
  stats: TrainingStats;
  cameras: string[];
  instructions: string[];
}

function meanStd(rows: Float32Array[], dim: number): { mean: number[]; std: number[] } {
  const mean = new Array(dim).fill(0);
  const sq = new Array(dim).fill(0);
  for (const r of rows) {
    for (let k = 0; k < dim; k++) {
      mean[k] += r[k] as number;
      sq[k] += (r[k] as number) ** 2;
    }
  }
  const n = Math.max(1, rows.length);
  return {
    mean: mean.map((s) => s / n),
    std: sq.map((s, k) => Math.sqrt(Math.max(0, s / n - (mean[k] / n) ** 2))),
  };
}

/** Reads one or more datasets (same features) into one training set; episodes are numbered across them. */
/**
 * The action and state sizes the datasets share (from their `info.json` features; 7 and 8, the
 * MuJoCo suites', where a feature has no shape). Datasets that differ cannot train one network.
 */
export function datasetDims(datasets: readonly Dataset[]): { actionDim: number; stateDim: number } {
  const dims = (ds: Dataset) => ({
    actionDim: ds.info.features.action?.shape[0] ?? 7,
    stateDim: ds.info.features["observation.state"]?.shape[0] ?? 8,
  });
  const first = datasets[0];
  if (!first) throw new ProvaelError("config/invalid", "no dataset to train on");
  const want = dims(first);
  for (const ds of datasets.slice(1)) {
    const got = dims(ds);
    if (got.actionDim !== want.actionDim || got.stateDim !== want.stateDim) {
      throw new ProvaelError(
        "config/invalid",
        `the dataset ${ds.dir} has ${got.actionDim}-D actions and ${got.stateDim}-D states; ${first.dir} has ${want.actionDim}-D and ${want.stateDim}-D`,
        { hint: "train on datasets recorded from one suite (or with one action and state layout)" },
      );
    }
  }
  return want;
}

export async function buildTrainingSet(
  datasets: Dataset[],
  options: BuildOptions,
): Promise<BuiltTrainingSet> {
  const first = datasets[0];
  if (!first) throw new ProvaelError("config/invalid", "no dataset to train on");
  const cameras = options.cameras ?? first.cameras;
  for (const ds of datasets) {
    for (const cam of cameras) {
      if (!ds.cameras.includes(cam)) {
        throw new ProvaelError("config/invalid", `the dataset ${ds.dir} has no '${cam}' camera`, {
          details: { cameras: ds.cameras },
        });
      }
    }
  }
  const stride = Math.max(1, options.stride ?? TRAIN_DEFAULTS.stride);
  const jobs = datasets.flatMap((ds, d) =>
    (options.episodes?.[d] ?? ds.episodes.map((e) => e.episodeIndex)).map((e) => ({ ds, e })),
  );
  const S = options.imageSize;
  const px = S * S * 3;
  const instructions = [...new Set(jobs.map(({ ds, e }) => ds.episodes[e]?.task ?? ""))].sort();
  const kind = options.subword ? "subword" : "words";
  const vocabularyTexts = options.vocabulary
    ? [...instructions, options.vocabulary.join(" ")]
    : instructions;
  const text = buildTextUnits(kind, vocabularyTexts, options.maxTokens, options.subword);
  const { actionDim, stateDim } = datasetDims(datasets);
  const count = jobs.reduce(
    (s, { ds, e }) => s + Math.ceil((ds.episodes[e]?.length ?? 0) / stride),
    0,
  );
  const images = cameras.map(() => FrameStore.alloc(count, px, options.framesPerBlock));
  const state = new Float32Array(count * stateDim);
  const targets = new Float32Array(count * options.chunk * actionDim);
  const textOf = new Int32Array(count);
  const episodeOf = new Int32Array(count);
  const aux = options.auxTarget ? new Float32Array(count * 2).fill(Number.NaN) : undefined;
  const auxRows: Float32Array[] = [];
  const tokens = encodeAll(text, instructions);
  const featureCfg = { stateDim, stateFeatures: options.stateFeatures ?? "pose6d" } as const;
  const featureDim = stateFeatureDim(featureCfg);
  const states: Float32Array[] = [];
  const actions: Float32Array[] = [];
  let n = 0;
  for (const [done, { ds, e }] of jobs.entries()) {
    const length = ds.episodes[e]?.length ?? 0;
    const ep = await ds.episode(e, {
      // Only the frames a sample is taken from are decoded (every stride-th); the others give
      // their actions to the chunks.
      ...(stride > 1
        ? { frames: Array.from({ length: Math.ceil(length / stride) }, (_, k) => k * stride) }
        : {}),
      mapImage: (_cam: string, img: Image): Image => ({
        width: S,
        height: S,
        channels: 3,
        data: resizeArea(img, S),
      }),
    });
    const text = instructions.indexOf(ep.meta.task);
    const T = ep.frames.length;
    const target = options.auxTarget?.(ep.meta);
    const firstClose = ep.frames.findIndex((f) => (f.action[f.action.length - 1] ?? 0) > 0);
    for (let t = 0; t < T; t += stride) {
      const f = ep.frames[t];
      if (!f) continue;
      cameras.forEach((cam, c) => {
        (images[c] as FrameStore).set(n, (f.images[cam] as Image).data);
      });
      state.set(f.state, n * stateDim);
      const feat = new Float32Array(featureDim);
      stateFeatures(featureCfg, f.state, feat);
      states.push(feat);
      for (let k = 0; k < options.chunk; k++) {
        const a = (ep.frames[Math.min(T - 1, t + k)] as { action: Float32Array }).action;
        targets.set(a, (n * options.chunk + k) * actionDim);
      }
      textOf[n] = text;
      episodeOf[n] = done;
      if (aux && target && (firstClose < 0 || t < firstClose)) {
        const rel = Float32Array.of(target[0] - (f.state[0] ?? 0), target[1] - (f.state[1] ?? 0));
        aux.set(rel, n * 2);
        auxRows.push(rel);
      }
      n++;
    }
    for (const f of ep.frames) actions.push(f.action);
    options.onProgress?.(done + 1, jobs.length);
  }
  const s = meanStd(states, featureDim);
  const a = meanStd(actions, actionDim);
  const x = meanStd(auxRows, 2);
  return {
    set: {
      count: n,
      images,
      state,
      targets,
      tokens,
      text: unitsLayout(text),
      textOf,
      episodeOf,
      ...(aux ? { aux } : {}),
    },
    text,
    stats: {
      stateMean: s.mean,
      stateStd: s.std.map((v) => Math.max(v, 1e-3)),
      actionScale: a.std.map((v) => Math.max(v, 0.05)),
      ...(auxRows.length > 0 ? { auxScale: x.std.map((v) => Math.max(v, 0.02)) } : {}),
    },
    cameras,
    instructions,
  };
}

// ---------------------------------------------------------------------------------------------
// Cache: decoding and resizing every PNG takes minutes; a built set reloads in seconds.

const CACHE_MAGIC = "provael.tiny-vla.trainingset/1";

interface CacheHeader {
  magic: string;
  key: string;
  count: number;
  cameras: string[];
  instructions: string[];
  /** Caches written before subword units: the word tokenizer. */
  tokenizer?: TokenizerJson;
  text?: TextUnitsJson;
  stats: TrainingStats;
  arrays: { name: string; type: "u8" | "f32" | "i32"; length: number }[];
}

/** Writes a built training set to one file (JSON header line, then the raw arrays). */
export function saveTrainingSet(path: string, key: string, built: BuiltTrainingSet): void {
  const { set } = built;
  // A camera's frames are written back to back, one array in the file however they are blocked.
  const arrays: [string, readonly (Uint8Array | Float32Array | Int32Array)[]][] = [
    ...set.images.map((a, i) => [`images.${i}`, a.blocks] as [string, readonly Uint8Array[]]),
    ["state", [set.state]],
    ["targets", [set.targets]],
    ["tokens", [set.tokens]],
    ["textOf", [set.textOf]],
    ["episodeOf", [set.episodeOf]],
    ...(set.aux ? [["aux", [set.aux]] as [string, Float32Array[]]] : []),
  ];
  const header: CacheHeader = {
    magic: CACHE_MAGIC,
    key,
    count: set.count,
    cameras: built.cameras,
    instructions: built.instructions,
    text: built.text.toJson(),
    stats: built.stats,
    arrays: arrays.map(([name, parts]) => ({
      name,
      type:
        parts[0] instanceof Float32Array ? "f32" : parts[0] instanceof Int32Array ? "i32" : "u8",
      length: parts.reduce((n, a) => n + a.length, 0),
    })),
  };
  const fd = openSync(path, "w");
  try {
    writeSync(fd, `${JSON.stringify(header)}\n`);
    for (const [, parts] of arrays) {
      for (const a of parts) {
        const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
        // One write call moves at most ~2 GiB; write in pieces.
        for (let done = 0; done < bytes.length; ) {
          done += writeSync(fd, bytes, done, Math.min(bytes.length - done, 1 << 30));
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** Reads a cached training set, or undefined when the file is missing or was built differently. */
export function loadTrainingSet(
  path: string,
  key: string,
  framesPerBlock?: number,
): BuiltTrainingSet | undefined {
  if (!existsSync(path)) return undefined;
  // Read piecewise: a cache can exceed the 2 GiB a single readFileSync allows.
  const fd = openSync(path, "r");
  try {
    let head = Buffer.alloc(0);
    let nl = -1;
    while (nl < 0) {
      const chunk = Buffer.alloc(1 << 16);
      const n = readSync(fd, chunk, 0, chunk.length, head.length);
      if (n === 0) return undefined;
      head = Buffer.concat([head, chunk.subarray(0, n)]);
      nl = head.indexOf(10);
    }
    let header: CacheHeader;
    try {
      header = JSON.parse(head.subarray(0, nl).toString("utf8")) as CacheHeader;
    } catch {
      return undefined;
    }
    if (header.magic !== CACHE_MAGIC || header.key !== key) return undefined;
    let offset = nl + 1;
    const fill = (data: Uint8Array): boolean => {
      for (let done = 0; done < data.length; ) {
        const n = readSync(fd, data, done, Math.min(data.length - done, 1 << 30), offset + done);
        if (n === 0) return false;
        done += n;
      }
      offset += data.length;
      return true;
    };
    const got = new Map<string, Uint8Array | Float32Array | Int32Array>();
    const stores = new Map<string, FrameStore>();
    for (const a of header.arrays) {
      if (a.name.startsWith("images.")) {
        // Frames go into blocks: a camera's frames can be more than one typed array holds.
        const frameBytes = header.count > 0 ? a.length / header.count : 1;
        if (!Number.isInteger(frameBytes)) return undefined;
        const store = FrameStore.alloc(header.count, frameBytes, framesPerBlock);
        for (const block of store.blocks) if (!fill(block)) return undefined;
        stores.set(a.name, store);
        continue;
      }
      const data = new Uint8Array(a.length * (a.type === "u8" ? 1 : 4));
      if (!fill(data)) return undefined;
      got.set(
        a.name,
        a.type === "u8"
          ? data
          : a.type === "f32"
            ? new Float32Array(data.buffer)
            : new Int32Array(data.buffer),
      );
    }
    const json: TextUnitsJson | undefined =
      header.text ?? (header.tokenizer ? { kind: "words", ...header.tokenizer } : undefined);
    if (!json) return undefined;
    const text = textUnitsFromJson(json);
    return {
      set: {
        count: header.count,
        images: header.cameras.map((_, i) => stores.get(`images.${i}`) as FrameStore),
        state: got.get("state") as Float32Array,
        targets: got.get("targets") as Float32Array,
        tokens: got.get("tokens") as Int32Array,
        text: unitsLayout(text),
        textOf: got.get("textOf") as Int32Array,
        episodeOf: got.get("episodeOf") as Int32Array,
        ...(got.has("aux") ? { aux: got.get("aux") as Float32Array } : {}),
      },
      text,
      stats: header.stats,
      cameras: header.cameras,
      instructions: header.instructions,
    };
  } finally {
    closeSync(fd);
  }
}
