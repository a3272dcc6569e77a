/**
 * The tiny-vla network, functional style over explicit named weights (ARCHITECTURE.md §7).
 *
 * Per camera: the image (area-resized to `imageSize`) is cut into `patch`x`patch` patches, each
 * embedded by one matrix multiply plus a learned position embedding. The instruction's text
 * units (text-units.ts) are mean-embedded (`meanEmbedding`: v1 word ids by a one-hot matmul and a
 * masked mean, subword n-grams as a bag by one matmul; never `tf.gather`, which the WASM backend
 * cannot train) into a text vector that FiLM-modulates every patch (scale and shift), followed
 * by a per-patch layer.
 * `keypoints` softmaxes over the patches give attention maps: their expected image coordinates
 * and attention-pooled features, with the text vector and the normalised state, feed an MLP head
 * that predicts a chunk of `chunk` actions: 6 continuous dims (regression) and a gripper logit.
 *
 * @example
 *   const cfg = defaultConfig(units.size, stats, { maxTokens: units.slots });
 *   const weights = initWeights(cfg, Rng.fromLabel("tiny-vla:init:0"));
 *   const out = forward(tf, toTensors(tf, weights), batchTensors(tf, cfg, batch), cfg);
 */
import type { Rng } from "../../core/rng.js";
import type { Image } from "../../core/types.js";
import type { tf as TF } from "./backend.js";
import { type TextInput, WordSequences } from "./text-units.js";

type Tf = typeof TF;
type Tensor = TF.Tensor;

export interface TinyVlaConfig {
  /** Cameras read, in this order. */
  cameras: string[];
  /** Side of the square image the network sees (area-resized from the camera's). */
  imageSize: number;
  /** Side of a square patch. */
  patch: number;
  /** Patch embedding width. */
  dim: number;
  /** Word embedding width. */
  textDim: number;
  /** Spatial-softmax heads per camera. */
  keypoints: number;
  /** Width of the attention-pooled feature per head. */
  pooled: number;
  /** Widths of the MLP head's hidden layers. */
  hidden: number[];
  /**
   * Outputs of the training-only auxiliary head (0 for none): the named object's position
   * relative to the gripper, read from the visual features through one hidden layer of
   * `auxHidden`. It gives every frame a localisation target; the actions read it when
   * `auxToHead` is set.
   */
  aux: number;
  auxHidden: number;
  /**
   * Feed the auxiliary head's output (the named object's predicted position relative to the
   * gripper) into the action head: a localisation bottleneck the actions can rely on.
   */
  auxToHead?: boolean;
  /**
   * Per camera, one extra attention whose query is the instruction itself (dot product of each
   * patch's features with a projection of the text vector): the patch the words point at. Its
   * expected image position and pooled features feed the heads.
   */
  targetAttention?: boolean;
  /** Spread of each auxiliary target (its loss unit), from the training data. */
  auxScale: number[];
  /**
   * What the auxiliary head predicts. "relative": the object's position relative to the gripper,
   * from all features. "absolute": the object's world (x, y), from the camera features and the
   * text only, never the state: in demonstrations the gripper sits on the object whenever it is
   * low, so a head that sees the state learns "low means arrived" instead of looking.
   */
  auxMode?: "relative" | "absolute" | "anchored";
  /** Mean of each auxiliary target ("absolute" mode), from the training data. */
  auxMean?: number[];
  /**
   * "anchored" mode: the localisation head is trained only on frames where the gripper is at
   * least this far (m, horizontally) from the object, so "the object is where the gripper is"
   * cannot be learned.
   */
  anchorFar?: number;
  /**
   * "anchored" mode: a separate locator finds the named object in the first camera. Small
   * patches (`patch` px) embedded by two layers, scored against a query made from the words,
   * soft-argmaxed to image coordinates, then mapped to the table (x, y). Translation
   * equivariant: no position embedding, so it cannot memorise where training objects stood.
   * `offset`: each patch also predicts where inside itself the object sits (a bounded shift of
   * its centre), so the soft-argmax is not stuck on the patch grid. `heatmap`: the patch-score
   * supervision in training, one-hot on the object's patch ("cell") or split bilinearly over
   * the four nearest patch centres ("bilinear", whose expectation is the exact point).
   * `context`: the query also reads the whole view (each feature's largest value over the
   * patches, through one dense layer started at zero), so what a patch scores can depend on
   * something elsewhere in the picture. Without it a patch's score sees only that patch and the
   * words: no locator could learn "when this tile is anywhere in view, point at the knife".
   */
  locator?: {
    size: number;
    patch: number;
    dim: number;
    hidden: number;
    sharpness?: number;
    offset?: boolean;
    heatmap?: "cell" | "bilinear";
    context?: boolean;
    /**
     * A second look where the locator looked: the raw pixels and patch features of the
     * (2·radius+1)² patches around each patch, weighted by the locator's attention, with the
     * image point and its shift, read by one hidden layer that corrects the table position by
     * a bounded amount. Sees no words, so it sharpens *where* without touching *which*: trained
     * alone on a trained locator, it cannot change which object a sentence names
     * (docs/tiny-vla.md, "The locator's precision").
     */
    refine?: { radius: number; hidden: number };
    /**
     * Soft-argmax over the patches within this many patches (rows and columns) of the best-
     * scoring one only. Where the scores have two peaks (two objects of near colour, a word read
     * half right) a soft-argmax over the whole view puts the point between them, on neither;
     * kept local it goes to the stronger one.
     */
    local?: number;
    /**
     * What the map from image point to table position reads beside the point: the words
     * (absent, as every model before it) or "view", the patch features where the locator
     * looked, weighted by its attention. The words tell the map which object it is placing
     * (its height moves where its visible middle meets the table), but a sentence never seen
     * moves that reading too: on v2.1's held-out phrasings of the blue ball the image point
     * stayed within a fraction of a patch while the table position moved 1.7-3.9 cm. What the
     * object looks like says the same without the sentence.
     */
    map?: "view";
  };
  chunk: number;
  actionDim: number;
  /** Length of the raw state vector. */
  stateDim: number;
  /**
   * How the state enters the network: "pose6d" turns the 8-D LIBERO-layout state (position,
   * axis-angle, fingers) into position, two rotation-matrix columns and fingers (11-D), because
   * axis-angle flips sign near a half turn, where the gripper pointing down lives; "raw" as is.
   */
  stateFeatures: "pose6d" | "raw";
  /**
   * Read the instruction word by word instead of as one bag (v2 text path; absent: the mean of
   * its units). Each word's vector (its units' mean embedding) is seen with its context, the
   * words before and after it summed at two decay rates, by one layer of `hidden` units, whose
   * `heads` scores per word are softmaxed over the words: each head's attention-weighted mean
   * of the word vectors is one part of the text vector. The context is what tells "the knife"
   * in "pick up the knife" from "the knife" in "and leave the knife alone", which the bag
   * cannot; the learned score is what lets an unseen filler word weigh nothing. The actor's
   * text and the locator's query each have their own. Input: `WordSequences` (text-units.ts).
   */
  textContext?: { hidden: number; heads: number };
  /** Words the text units keep of an instruction (the tokenizer's `maxLength`). */
  maxTokens: number;
  /** Width of the text bag: the text units' `size` (v1: the vocabulary, subword: the buckets). */
  vocabSize: number;
  /** Normalisation of the state features (from the training data). */
  stateMean: number[];
  stateStd: number[];
  /** Continuous action dims are predicted divided by this (from the training data). */
  actionScale: number[];
}

/**
 * The architecture of the shipped weights (docs/tiny-vla.md), on top of `defaultConfig`: the
 * actions read the offset to an object position found once per episode by the locator.
 */
export const SHIPPED_MODEL: Partial<TinyVlaConfig> = {
  auxToHead: true,
  auxMode: "anchored",
  locator: { size: 128, patch: 4, dim: 24, hidden: 32, offset: true, heatmap: "bilinear" },
};

/** The locator's second look `provael train tiny-vla --locator-refine` trains (refineInputs x 16). */
export const LOCATOR_REFINE: NonNullable<NonNullable<TinyVlaConfig["locator"]>["refine"]> = {
  radius: 2,
  hidden: 16,
};

/** The word-by-word text reading `provael train tiny-vla --text-context` trains. */
export const TEXT_CONTEXT: NonNullable<TinyVlaConfig["textContext"]> = { hidden: 32, heads: 2 };

export function defaultConfig(
  vocabSize: number,
  stats: { stateMean: number[]; stateStd: number[]; actionScale: number[]; auxScale?: number[] },
  overrides: Partial<TinyVlaConfig> = {},
): TinyVlaConfig {
  return {
    cameras: ["agentview", "wrist"],
    imageSize: 64,
    patch: 8,
    dim: 64,
    textDim: 64,
    keypoints: 8,
    pooled: 16,
    hidden: [256, 256],
    aux: 2,
    auxHidden: 64,
    auxScale: [0.1, 0.1],
    chunk: 4,
    actionDim: 7,
    stateDim: 8,
    stateFeatures: "pose6d",
    maxTokens: 16,
    vocabSize,
    ...stats,
    ...overrides,
  };
}

/** Patches per image side and in all. */
export function patchGrid(cfg: TinyVlaConfig): { side: number; count: number; size: number } {
  const side = Math.floor(cfg.imageSize / cfg.patch);
  return { side, count: side * side, size: cfg.patch * cfg.patch * 3 };
}

/** Number of continuous action dims (all but the gripper, which is last). */
export function moveDims(cfg: TinyVlaConfig): number {
  return cfg.actionDim - 1;
}

/** Names and shapes of every weight, in file order. */
export function weightShapes(cfg: TinyVlaConfig): [string, number[]][] {
  const { count, size } = patchGrid(cfg);
  const { dim, textDim, keypoints, pooled } = cfg;
  const shapes: [string, number[]][] = [
    ["text.embed", [cfg.vocabSize, textDim]],
    ...contextShapes(cfg, "text", textDim),
    ["text.w", [textWidth(cfg, textDim), textDim]],
    ["text.b", [textDim]],
  ];
  for (const cam of cfg.cameras) {
    shapes.push(
      [`${cam}.patch.w`, [size, dim]],
      [`${cam}.patch.b`, [dim]],
      [`${cam}.pos`, [count, dim]],
      [`${cam}.film.gamma.w`, [textDim, dim]],
      [`${cam}.film.gamma.b`, [dim]],
      [`${cam}.film.beta.w`, [textDim, dim]],
      [`${cam}.film.beta.b`, [dim]],
      [`${cam}.mix.w`, [dim, dim]],
      [`${cam}.mix.b`, [dim]],
      [`${cam}.key.w`, [dim, keypoints]],
      [`${cam}.key.b`, [keypoints]],
      [`${cam}.value.w`, [dim, pooled]],
      [`${cam}.value.b`, [pooled]],
    );
    if (cfg.targetAttention)
      shapes.push([`${cam}.query.w`, [textDim, dim]], [`${cam}.query.b`, [dim]]);
  }
  let width = headInputWidth(cfg) + (cfg.auxToHead && cfg.aux > 0 ? cfg.aux : 0);
  cfg.hidden.forEach((h, i) => {
    shapes.push([`head.${i}.w`, [width, h]], [`head.${i}.b`, [h]]);
    width = h;
  });
  shapes.push(
    ["head.out.w", [width, cfg.chunk * cfg.actionDim]],
    ["head.out.b", [cfg.chunk * cfg.actionDim]],
  );
  if (cfg.locator) {
    const { patch, dim, hidden } = cfg.locator;
    shapes.push(
      ["locator.embed", [cfg.vocabSize, dim]],
      ...contextShapes(cfg, "locator", dim),
      ["locator.query.w", [textWidth(cfg, dim), dim]],
      ["locator.query.b", [dim]],
      ["locator.patch.w", [patch * patch * 3, dim]],
      ["locator.patch.b", [dim]],
      ["locator.mix.w", [dim, dim]],
      ["locator.mix.b", [dim]],
      ["locator.score.b", [patchGrid(locatorConfig(cfg)).count]],
      ...(cfg.locator.context
        ? ([
            ["locator.context.w", [dim, dim]],
            ["locator.context.b", [dim]],
          ] as [string, number[]][])
        : []),
      ...(cfg.locator.offset
        ? ([
            ["locator.offset.w", [dim, 2]],
            ["locator.offset.b", [2]],
          ] as [string, number[]][])
        : []),
      ...(cfg.locator.refine
        ? ([
            ["locator.refine.0.w", [refineInputs(cfg), cfg.locator.refine.hidden]],
            ["locator.refine.0.b", [cfg.locator.refine.hidden]],
            ["locator.refine.out.w", [cfg.locator.refine.hidden, 2]],
            ["locator.refine.out.b", [2]],
          ] as [string, number[]][])
        : []),
      ["locator.map.0.w", [2 + (cfg.locator.map === "view" ? dim : textWidth(cfg, dim)), hidden]],
      ["locator.map.0.b", [hidden]],
      ["locator.map.1.w", [hidden, hidden]],
      ["locator.map.1.b", [hidden]],
      ["locator.map.out.w", [hidden, cfg.aux]],
      ["locator.map.out.b", [cfg.aux]],
    );
  }
  if (cfg.aux > 0) {
    shapes.push(
      ["aux.0.w", [auxInputWidth(cfg), cfg.auxHidden]],
      ["aux.0.b", [cfg.auxHidden]],
      ["aux.out.w", [cfg.auxHidden, cfg.aux]],
      ["aux.out.b", [cfg.aux]],
    );
  }
  return shapes;
}

/** Decay rates of the context sums a word is seen with (`textContext`), each side. */
const CONTEXT_DECAYS = [0.5, 0.8];

/** Width of a text read from `width`-wide word vectors: one vector, or one per context head. */
function textWidth(cfg: TinyVlaConfig, width: number): number {
  return cfg.textContext ? cfg.textContext.heads * width : width;
}

/** The context layer and attention scores of one text reader (`textContext`), if any. */
function contextShapes(cfg: TinyVlaConfig, prefix: string, width: number): [string, number[]][] {
  if (!cfg.textContext) return [];
  const { hidden, heads } = cfg.textContext;
  return [
    [`${prefix}.ctx.w`, [(1 + 2 * CONTEXT_DECAYS.length) * width, hidden]],
    [`${prefix}.ctx.b`, [hidden]],
    [`${prefix}.attend.w`, [hidden, heads]],
  ];
}

/** Whether the auxiliary head reads the cameras and the text only (world-position modes). */
export function auxIsWorld(cfg: Pick<TinyVlaConfig, "auxMode">): boolean {
  return cfg.auxMode === "absolute" || cfg.auxMode === "anchored";
}

function auxInputWidth(cfg: TinyVlaConfig): number {
  return auxIsWorld(cfg) ? headInputWidth(cfg) - stateFeatureDim(cfg) : headInputWidth(cfg);
}

/** Unit (m) of the gripper-to-object offset the action head reads in world-position modes. */
export const OFFSET_UNIT = 0.1;

function headInputWidth(cfg: TinyVlaConfig): number {
  const perCamera = (cfg.keypoints + (cfg.targetAttention ? 1 : 0)) * (2 + cfg.pooled);
  return cfg.cameras.length * perCamera + stateFeatureDim(cfg) + cfg.textDim;
}

/** Width of the state features the network reads. */
export function stateFeatureDim(cfg: Pick<TinyVlaConfig, "stateDim" | "stateFeatures">): number {
  return cfg.stateFeatures === "pose6d" && cfg.stateDim === 8 ? 11 : cfg.stateDim;
}

/** Writes the state features of a raw state into `out` at `offset` (see `stateFeatures`). */
export function stateFeatures(
  cfg: Pick<TinyVlaConfig, "stateDim" | "stateFeatures">,
  raw: ArrayLike<number>,
  out: Float32Array,
  offset = 0,
): void {
  if (stateFeatureDim(cfg) === cfg.stateDim) {
    for (let k = 0; k < cfg.stateDim; k++) out[offset + k] = raw[k] ?? 0;
    return;
  }
  const vx = raw[3] ?? 0;
  const vy = raw[4] ?? 0;
  const vz = raw[5] ?? 0;
  const theta = Math.hypot(vx, vy, vz);
  const inv = theta < 1e-9 ? 0 : 1 / theta;
  const kx = vx * inv;
  const ky = vy * inv;
  const kz = vz * inv;
  const c = Math.cos(theta);
  const sn = Math.sin(theta);
  const C = 1 - c;
  const f = [
    raw[0] ?? 0,
    raw[1] ?? 0,
    raw[2] ?? 0,
    // First and second columns of the rotation matrix (Rodrigues).
    c + kx * kx * C,
    ky * kx * C + kz * sn,
    kz * kx * C - ky * sn,
    kx * ky * C - kz * sn,
    c + ky * ky * C,
    kz * ky * C + kx * sn,
    raw[6] ?? 0,
    raw[7] ?? 0,
  ];
  for (let k = 0; k < f.length; k++) out[offset + k] = f[k] as number;
}

export type Weights = Map<string, Float32Array>;

export function parameterCount(cfg: TinyVlaConfig): number {
  return weightShapes(cfg).reduce((s, [, shape]) => s + shape.reduce((a, b) => a * b, 1), 0);
}

/** Seeded initial weights: Glorot-uniform matrices, zero biases, small embeddings. */
export function initWeights(cfg: TinyVlaConfig, rng: Rng): Weights {
  const out: Weights = new Map();
  for (const [name, shape] of weightShapes(cfg)) {
    const n = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    const r = rng.fork(name);
    if (name.endsWith(".b")) {
      // FiLM starts as the identity: gamma = 1 + 0, beta = 0.
    } else if (name === "locator.context.w" || name === "locator.refine.out.w") {
      // Zero: a locator given the view's context (or a second look) starts as the one without
      // it (a fine-tune that adds it keeps the initial model's outputs until training moves it).
    } else if (name === "text.embed") {
      for (let i = 0; i < n; i++) data[i] = r.normal() * 0.3;
    } else if (name.endsWith(".pos")) {
      for (let i = 0; i < n; i++) data[i] = r.normal() * 0.1;
    } else {
      const [fanIn, fanOut] = shape as [number, number];
      // FiLM weights start small so early training sees nearly unmodulated patches.
      const gain = name.includes(".film.") ? 0.1 : 1;
      const limit = gain * Math.sqrt(6 / (fanIn + fanOut));
      for (let i = 0; i < n; i++) data[i] = r.uniform(-limit, limit);
    }
    out.set(name, data);
  }
  return out;
}

/**
 * `weights` with every weight `cfg` has and they lack taken from a seeded initialisation: how a
 * part added to a trained model (the locator's context, which starts at zero) joins it.
 */
export function completeWeights(cfg: TinyVlaConfig, weights: Weights, rng: Rng): Weights {
  const start = initWeights(cfg, rng);
  return new Map([...start].map(([name, data]) => [name, weights.get(name) ?? data]));
}

export type WeightTensors = Record<string, Tensor>;

/** Tensors of a weight map (the caller disposes them). */
export function toTensors(tf: Tf, cfg: TinyVlaConfig, weights: Weights): WeightTensors {
  const out: WeightTensors = {};
  for (const [name, shape] of weightShapes(cfg)) {
    const data = weights.get(name);
    if (!data) throw new Error(`missing weight '${name}'`);
    out[name] = tf.tensor(data, shape, "float32");
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Inputs

/**
 * Area-averaging resize of an HWC RGB image to `size`x`size`, rounded to 8 bits: the exact
 * preprocessing used for training data and at inference, deterministic in plain JS.
 */
export function resizeArea(image: Image, size: number): Uint8Array {
  const { width, height, channels, data } = image;
  const out = new Uint8Array(size * size * 3);
  if (width === size && height === size && channels === 3) {
    out.set(data);
    return out;
  }
  const f = width / size;
  if (width === height && Number.isInteger(f) && channels === 3) {
    // Whole blocks (the common 128 -> 64): a plain block mean, 5x faster than the weighted path.
    const inv = 1 / (f * f);
    for (let i = 0; i < size; i++) {
      for (let j = 0; j < size; j++) {
        let r = 0;
        let g = 0;
        let b = 0;
        for (let y = i * f; y < (i + 1) * f; y++) {
          let s = (y * width + j * f) * 3;
          for (let x = 0; x < f; x++, s += 3) {
            r += data[s] as number;
            g += data[s + 1] as number;
            b += data[s + 2] as number;
          }
        }
        const d = (i * size + j) * 3;
        out[d] = Math.round(r * inv);
        out[d + 1] = Math.round(g * inv);
        out[d + 2] = Math.round(b * inv);
      }
    }
    return out;
  }
  const wy = areaWeights(height, size);
  const wx = areaWeights(width, size);
  for (let i = 0; i < size; i++) {
    for (let j = 0; j < size; j++) {
      let r = 0;
      let g = 0;
      let b = 0;
      for (const [y, a] of wy[i] as [number, number][]) {
        for (const [x, c] of wx[j] as [number, number][]) {
          const w = a * c;
          const s = (y * width + x) * channels;
          r += w * (data[s] as number);
          g += w * (data[s + 1] as number);
          b += w * (data[s + 2] as number);
        }
      }
      const d = (i * size + j) * 3;
      out[d] = Math.round(r);
      out[d + 1] = Math.round(g);
      out[d + 2] = Math.round(b);
    }
  }
  return out;
}

const weightCache = new Map<string, [number, number][][]>();

/** For each output cell, the input indices it covers and their weights (summing to 1). */
export function areaWeights(from: number, to: number): [number, number][][] {
  const key = `${from}:${to}`;
  const hit = weightCache.get(key);
  if (hit) return hit;
  const scale = from / to;
  const out: [number, number][][] = [];
  for (let i = 0; i < to; i++) {
    const lo = i * scale;
    const hi = (i + 1) * scale;
    const cell: [number, number][] = [];
    for (let k = Math.floor(lo); k < Math.ceil(hi) && k < from; k++) {
      const overlap = Math.min(hi, k + 1) - Math.max(lo, k);
      if (overlap > 1e-9) cell.push([k, overlap / scale]);
    }
    out.push(cell);
  }
  weightCache.set(key, out);
  return out;
}

/**
 * Patch layout of a `size`x`size` RGB image (8-bit) as floats in [-0.5, 0.5]: patch-major, each
 * patch row-major HWC, written into `out` at `offset`.
 */
export function patchify(
  cfg: TinyVlaConfig,
  pixels: Uint8Array,
  out: Float32Array,
  offset = 0,
): void {
  const { side } = patchGrid(cfg);
  const p = cfg.patch;
  const s = cfg.imageSize;
  let o = offset;
  for (let py = 0; py < side; py++) {
    for (let px = 0; px < side; px++) {
      for (let y = 0; y < p; y++) {
        const row = ((py * p + y) * s + px * p) * 3;
        for (let k = 0; k < p * 3; k++) out[o++] = (pixels[row + k] as number) / 255 - 0.5;
      }
    }
  }
}

/** Inverse of `patchify`'s layout for a gradient: patch-major floats -> `size`x`size`x3 HWC. */
export function unpatchify(cfg: TinyVlaConfig, patches: Float32Array): Float32Array {
  const { side } = patchGrid(cfg);
  const p = cfg.patch;
  const s = cfg.imageSize;
  const out = new Float32Array(s * s * 3);
  let o = 0;
  for (let py = 0; py < side; py++) {
    for (let px = 0; px < side; px++) {
      for (let y = 0; y < p; y++) {
        const row = ((py * p + y) * s + px * p) * 3;
        for (let k = 0; k < p * 3; k++) out[row + k] = patches[o++] as number;
      }
    }
  }
  return out;
}

/** Gradient on the resized image mapped back to the camera image (adjoint of `resizeArea`). */
export function resizeAdjoint(
  grad: Float32Array,
  size: number,
  width: number,
  height: number,
): Float32Array {
  const out = new Float32Array(width * height * 3);
  const wy = areaWeights(height, size);
  const wx = areaWeights(width, size);
  for (let i = 0; i < size; i++) {
    for (let j = 0; j < size; j++) {
      const d = (i * size + j) * 3;
      for (const [y, a] of wy[i] as [number, number][]) {
        for (const [x, c] of wx[j] as [number, number][]) {
          const w = a * c;
          const s = (y * width + x) * 3;
          out[s] = (out[s] as number) + w * (grad[d] as number);
          out[s + 1] = (out[s + 1] as number) + w * (grad[d + 1] as number);
          out[s + 2] = (out[s + 2] as number) + w * (grad[d + 2] as number);
        }
      }
    }
  }
  return out;
}

/**
 * A batch in host memory: per camera patches [B, P, patch²·3], the text as the units' network
 * input (`TextInput`: word ids [B, maxTokens] int32, or subword bags [B, vocabSize] float32),
 * state features [B, F].
 */
export interface HostBatch {
  size: number;
  patches: Float32Array[];
  text: TextInput;
  state: Float32Array;
  /** "anchored" mode: the gripper-to-object offset [B, aux] in OFFSET_UNIT. */
  offset?: Float32Array;
}

/** Word sequences as tensors: the distinct words' bags [U, size] and each slot's row [B, slots]. */
export interface SequenceTensors {
  bags: Tensor;
  index: Tensor;
}

/** The text of a batch as the network reads it: ids or bags (one tensor), or word sequences. */
export type TextTensors = Tensor | SequenceTensors;

/** Rows (texts) of a batch's text. */
export function textRows(text: TextTensors): number {
  return ("index" in text ? text.index.shape[0] : text.shape[0]) as number;
}

export interface BatchTensors {
  patches: Tensor[];
  text: TextTensors;
  state: Tensor;
  offset?: Tensor;
}

/**
 * The text rows of a batch as tensors: word ids [B, maxTokens] int32, bags [B, vocabSize], or
 * word sequences (`SequenceTensors`).
 */
export function textTensor(tf: Tf, cfg: TinyVlaConfig, text: TextInput, rows: number): TextTensors {
  if (text instanceof WordSequences) {
    const bags = text.bags();
    return {
      bags: tf.tensor2d(bags, [bags.length / cfg.vocabSize, cfg.vocabSize]),
      index: tf.tensor2d(text.index, [rows, cfg.maxTokens], "int32"),
    };
  }
  return text instanceof Int32Array
    ? tf.tensor2d(text, [rows, cfg.maxTokens], "int32")
    : tf.tensor2d(text, [rows, cfg.vocabSize]);
}

/**
 * The mean embedding of a text's units [B, width]. Word ids [B, L] (int32) take v1's path, a
 * one-hot matmul (the WASM backend cannot train `tf.gather`) then the mean over the non-pad
 * tokens, in v1's order of operations, so the shipped weights give v1's bytes; subword bags
 * [B, vocabSize] are one matmul (bag x embed is the same mean, summed in id order).
 */
function meanEmbedding(tf: Tf, text: TextTensors, embed: Tensor, cfg: TinyVlaConfig): Tensor {
  if ("index" in text) throw new Error("word sequences are read by readText, not as a mean");
  if (text.dtype !== "int32") return matMul(tf, text, embed);
  const B = text.shape[0] as number;
  const L = cfg.maxTokens;
  const width = embed.shape[1] as number;
  const onehot = tf.cast(tf.oneHot(tf.reshape(text, [B * L]), cfg.vocabSize), "float32");
  const emb = tf.reshape(matMul(tf, onehot, embed), [B, L, width]);
  const mask = tf.cast(tf.notEqual(text, 0), "float32");
  const summed = tf.sum(tf.mul(emb, tf.expandDims(mask, 2)), 1);
  return tf.div(summed, tf.maximum(tf.sum(mask, 1, true), 1));
}

const contextCache = new Map<string, Float32Array>();

/**
 * [L, L] sums of the context on one side of each word, transposed for a right product: entry
 * (j, i) is decay^(|i - j| - 1) for the words j before i (`side` "before") or after it, 0
 * elsewhere, so word vectors laid out [d, L] times it give each word its decayed context sum.
 * Built once per (L, decay, side): every forward pass of a context reader needs the same four.
 */
function contextMatrix(L: number, decay: number, side: "before" | "after"): Float32Array {
  const key = `${L}:${decay}:${side}`;
  const hit = contextCache.get(key);
  if (hit) return hit;
  const m = new Float32Array(L * L);
  for (let i = 0; i < L; i++) {
    for (let j = 0; j < L; j++) {
      const d = side === "before" ? i - j : j - i;
      if (d > 0) m[j * L + i] = decay ** (d - 1);
    }
  }
  contextCache.set(key, m);
  return m;
}

/**
 * A text read as the network's `prefix` reader does: the mean of its unit embeddings (no
 * `textContext`), or word by word (`textContext`): each word's vector with its decayed context
 * sums, through one layer, scored per head, softmaxed over the words present; the heads'
 * weighted means of the word vectors, side by side [B, heads x width].
 */
export function readText(
  tf: Tf,
  text: TextTensors,
  W: (name: string) => Tensor,
  prefix: string,
  cfg: TinyVlaConfig,
): Tensor {
  const embed = W(`${prefix}.embed`);
  if (!("index" in text)) {
    if (cfg.textContext) throw new Error("this tiny-vla reads word sequences (textContext)");
    return meanEmbedding(tf, text, embed, cfg);
  }
  const ctx = cfg.textContext;
  if (!ctx) throw new Error("word sequences need a tiny-vla with textContext");
  const B = text.index.shape[0] as number;
  const L = text.index.shape[1] as number;
  const U = text.bags.shape[0] as number;
  const d = embed.shape[1] as number;
  const vectors = matMul(tf, text.bags, embed); // [U, d], row 0 (no word) zero
  const pick = tf.cast(tf.oneHot(tf.reshape(text.index, [B * L]), U), "float32");
  const words = tf.reshape(matMul(tf, pick, vectors), [B, L, d]);
  // Context sums over the word axis: [B, L, d] -> [B*d, L] x [L, L] -> back.
  const byDim = tf.reshape(tf.transpose(words, [0, 2, 1]), [B * d, L]);
  const parts: Tensor[] = [words];
  for (const side of ["before", "after"] as const) {
    for (const decay of CONTEXT_DECAYS) {
      const m = tf.tensor2d(contextMatrix(L, decay, side), [L, L]);
      const summed = matMul(tf, byDim, m);
      parts.push(tf.transpose(tf.reshape(summed, [B, d, L]), [0, 2, 1]));
    }
  }
  const seen = tf.relu(
    dense(
      tf,
      tf.reshape(tf.concat(parts, 2), [B * L, parts.length * d]),
      W(`${prefix}.ctx.w`),
      W(`${prefix}.ctx.b`),
    ),
  );
  const present = tf.cast(tf.notEqual(text.index, 0), "float32"); // [B, L]
  // Absent slots get a large negative score; a text with no word at all pools to zeros.
  const scores = tf.add(
    tf.reshape(matMul(tf, seen, W(`${prefix}.attend.w`)), [B, L, ctx.heads]),
    tf.expandDims(tf.mul(tf.sub(present, 1), 1e4), 2),
  );
  const attn = tf.mul(
    tf.softmax(tf.transpose(scores, [0, 2, 1])),
    tf.expandDims(tf.max(present, 1, true), 2),
  ); // [B, heads, L]
  return tf.reshape(matMul(tf, attn, words), [B, ctx.heads * d]);
}

export function batchTensors(tf: Tf, cfg: TinyVlaConfig, batch: HostBatch): BatchTensors {
  const { count, size } = patchGrid(cfg);
  return {
    patches: batch.patches.map((p) => tf.tensor3d(p, [batch.size, count, size])),
    text: textTensor(tf, cfg, batch.text, batch.size),
    state: tf.tensor2d(batch.state, [batch.size, stateFeatureDim(cfg)]),
    ...(batch.offset ? { offset: tf.tensor2d(batch.offset, [batch.size, cfg.aux]) } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Forward

export interface ForwardOutput {
  /** Continuous dims, scaled back to action units: [B, chunk, actionDim - 1]. */
  move: Tensor;
  /** Gripper logits (> 0 means close): [B, chunk]. */
  grip: Tensor;
  /** Auxiliary outputs [B, aux] (training only), when the config has an auxiliary head. */
  aux?: Tensor;
}

const matMulCache = new WeakMap<object, (a: Tensor, b: Tensor) => Tensor>();

/**
 * Matrix product (2-D, or batched 3-D) whose gradient materialises the transposes: the WASM
 * backend's matMul with transpose flags is 4-10x slower than a transpose plus a plain matMul.
 */
export function matMul(tf: Tf, a: Tensor, b: Tensor): Tensor {
  let f = matMulCache.get(tf);
  if (!f) {
    const swap = (t: Tensor) => tf.transpose(t, t.rank === 3 ? [0, 2, 1] : [1, 0]);
    const body = (x: Tensor, y: Tensor, save: TF.GradSaveFunc) => {
      save([x, y]);
      return {
        value: tf.matMul(x as TF.Tensor2D, y as TF.Tensor2D),
        gradFunc: (dy: Tensor, saved: Tensor[]) => [
          tf.matMul(dy as TF.Tensor2D, swap(saved[1] as Tensor) as TF.Tensor2D),
          tf.matMul(swap(saved[0] as Tensor) as TF.Tensor2D, dy as TF.Tensor2D),
        ],
      };
    };
    f = tf.customGrad(body as unknown as Parameters<Tf["customGrad"]>[0]) as unknown as (
      a: Tensor,
      b: Tensor,
    ) => Tensor;
    matMulCache.set(tf, f);
  }
  return f(a, b);
}

function dense(tf: Tf, x: Tensor, w: Tensor, b: Tensor): Tensor {
  return tf.add(matMul(tf, x, w), b);
}

/** Image coordinates of the patch centres in [-1, 1] (x, y per patch), for soft-argmax positions. */
function patchCentres(count: number, side: number): Float32Array {
  const grid = new Float32Array(count * 2);
  for (let i = 0; i < count; i++) {
    grid[2 * i] = (((i % side) + 0.5) / side) * 2 - 1;
    grid[2 * i + 1] = ((Math.floor(i / side) + 0.5) / side) * 2 - 1;
  }
  return grid;
}

/** The network; call inside `tf.tidy` (or `tf.grad`). */
export function forward(
  tf: Tf,
  w: WeightTensors,
  input: BatchTensors,
  cfg: TinyVlaConfig,
  withAux = false,
): ForwardOutput {
  const W = (name: string): Tensor => {
    const t = w[name];
    if (!t) throw new Error(`missing weight '${name}'`);
    return t;
  };
  const B = textRows(input.text);
  const { count, side } = patchGrid(cfg);
  const { dim, keypoints, pooled } = cfg;

  // Text: the mean embedding of its units (or its words read in context), then one layer.
  const text = tf.relu(
    dense(tf, readText(tf, input.text, W, "text", cfg), W("text.w"), W("text.b")),
  );

  // Image coordinates of the patch centres in [-1, 1], for expected keypoint positions.
  const grid = patchCentres(count, side);
  const gridT = tf.tensor2d(grid, [count, 2]);

  const features: Tensor[] = [];
  cfg.cameras.forEach((cam, c) => {
    const x = input.patches[c] as Tensor;
    const flat = tf.reshape(x, [B * count, x.shape[2] as number]);
    const h0 = tf.reshape(dense(tf, flat, W(`${cam}.patch.w`), W(`${cam}.patch.b`)), [
      B,
      count,
      dim,
    ]);
    const h = tf.relu(tf.add(h0, W(`${cam}.pos`)));
    const gamma = tf.add(dense(tf, text, W(`${cam}.film.gamma.w`), W(`${cam}.film.gamma.b`)), 1);
    const beta = dense(tf, text, W(`${cam}.film.beta.w`), W(`${cam}.film.beta.b`));
    const f = tf.relu(tf.add(tf.mul(h, tf.expandDims(gamma, 1)), tf.expandDims(beta, 1)));
    const g = tf.relu(
      dense(tf, tf.reshape(f, [B * count, dim]), W(`${cam}.mix.w`), W(`${cam}.mix.b`)),
    );
    const logits = tf.reshape(dense(tf, g, W(`${cam}.key.w`), W(`${cam}.key.b`)), [
      B,
      count,
      keypoints,
    ]);
    const attn = tf.softmax(tf.transpose(logits, [0, 2, 1])); // [B, K, P]
    const xy = tf.reshape(matMul(tf, tf.reshape(attn, [B * keypoints, count]), gridT), [
      B,
      keypoints * 2,
    ]);
    const values = tf.reshape(dense(tf, g, W(`${cam}.value.w`), W(`${cam}.value.b`)), [
      B,
      count,
      pooled,
    ]);
    const pooledT = tf.reshape(matMul(tf, attn, values), [B, keypoints * pooled]);
    features.push(xy, pooledT);
    if (cfg.targetAttention) {
      const q = dense(tf, text, W(`${cam}.query.w`), W(`${cam}.query.b`));
      const g3 = tf.reshape(g, [B, count, dim]);
      const scores = tf.mul(
        tf.reshape(matMul(tf, g3, tf.expandDims(q, 2)), [B, count]),
        1 / Math.sqrt(dim),
      );
      const target = tf.reshape(tf.softmax(scores), [B, 1, count]);
      features.push(
        tf.reshape(matMul(tf, tf.reshape(target, [B, count]), gridT), [B, 2]),
        tf.reshape(matMul(tf, target, values), [B, pooled]),
      );
    }
  });

  const mean = tf.tensor1d(cfg.stateMean);
  const std = tf.tensor1d(cfg.stateStd.map((s) => Math.max(s, 1e-3)));
  const absolute = cfg.auxMode === "absolute";
  const visual = auxIsWorld(cfg) ? tf.concat([...features, text], 1) : undefined;
  features.push(tf.div(tf.sub(input.state, mean), std), text);
  const joined = tf.concat(features, 1);
  const anchored = cfg.auxMode === "anchored";
  const auxOut =
    cfg.aux > 0 && (withAux || (cfg.auxToHead && !anchored))
      ? dense(
          tf,
          tf.relu(dense(tf, visual ?? joined, W("aux.0.w"), W("aux.0.b"))),
          W("aux.out.w"),
          W("aux.out.b"),
        )
      : undefined;
  let headAux = anchored ? input.offset : auxOut;
  if (anchored && cfg.auxToHead && !input.offset) {
    throw new Error("an anchored tiny-vla needs the gripper-to-object offset as input");
  }
  if (absolute && auxOut) {
    // The head reads where the object is from the gripper: predicted world (x, y) minus the
    // gripper's (the first two state features), in OFFSET_UNIT.
    const world = tf.add(
      tf.mul(auxOut, tf.tensor1d(cfg.auxScale.slice(0, cfg.aux))),
      tf.tensor1d(Array.from({ length: cfg.aux }, (_, k) => cfg.auxMean?.[k] ?? 0)),
    );
    const gripper = tf.slice(input.state, [0, 0], [B, cfg.aux]);
    headAux = tf.div(tf.sub(world, gripper), OFFSET_UNIT);
  }
  let z = cfg.auxToHead && headAux ? tf.concat([joined, headAux], 1) : joined;
  cfg.hidden.forEach((_, i) => {
    z = tf.relu(dense(tf, z, W(`head.${i}.w`), W(`head.${i}.b`)));
  });
  const out = tf.reshape(dense(tf, z, W("head.out.w"), W("head.out.b")), [
    B,
    cfg.chunk,
    cfg.actionDim,
  ]);
  const m = moveDims(cfg);
  const scale = tf.tensor1d(cfg.actionScale.slice(0, m));
  const move = tf.mul(tf.slice(out, [0, 0, 0], [B, cfg.chunk, m]), scale);
  const grip = tf.reshape(tf.slice(out, [0, 0, m], [B, cfg.chunk, 1]), [B, cfg.chunk]);
  return withAux && auxOut ? { move, grip, aux: auxOut } : { move, grip };
}

/** `scores` [B, side²] with every patch farther than `radius` from the best one at -1e9. */
export function nearPeak(tf: Tf, scores: Tensor, side: number, radius: number): Tensor {
  const count = side * side;
  const peak = tf.argMax(scores, 1);
  const rowOf = tf.tensor1d(
    Array.from({ length: count }, (_, i) => Math.floor(i / side)),
    "int32",
  );
  const colOf = tf.tensor1d(
    Array.from({ length: count }, (_, i) => i % side),
    "int32",
  );
  const within = (of: Tensor, at: Tensor) =>
    tf.lessEqual(tf.abs(tf.sub(tf.expandDims(of, 0), tf.expandDims(at, 1))), radius);
  const near = tf.logicalAnd(
    within(rowOf, tf.floorDiv(peak, side)),
    within(colOf, tf.mod(peak, side)),
  );
  return tf.where(near, scores, tf.fill(scores.shape as [number, number], -1e9));
}

/** Width of the locator's second look (`locator.refine`): each offset's pixels and features, the point and its shift. */
function refineInputs(cfg: TinyVlaConfig): number {
  const { patch, dim, refine } = cfg.locator as NonNullable<TinyVlaConfig["locator"]>;
  const side = 2 * (refine?.radius ?? 0) + 1;
  return side * side * (patch * patch * 3 + dim) + 4;
}

/** The locator's view of the first camera: `locator.size` pixels in `locator.patch` patches. */
export function locatorConfig(cfg: TinyVlaConfig): TinyVlaConfig {
  if (!cfg.locator) throw new Error("this tiny-vla has no locator");
  return { ...cfg, imageSize: cfg.locator.size, patch: cfg.locator.patch };
}

/**
 * The locator (see `TinyVlaConfig.locator`): patches [B, P, patch²·3] of the first camera and
 * text bags [B, vocabSize] -> the named object's table position, normalised by
 * auxMean/auxScale [B, aux].
 * Call inside `tf.tidy` (or `tf.grad`).
 */
export function locatorForward(
  tf: Tf,
  w: WeightTensors,
  patches: Tensor,
  text: TextTensors,
  cfg: TinyVlaConfig,
): Tensor {
  return locatorOutputs(tf, w, patches, text, cfg).world;
}

/**
 * The locator's table position, its per-patch scores [B, P] (for heatmap supervision), the image
 * point and the table position its map gives before any second look (for diagnosis).
 */
export function locatorOutputs(
  tf: Tf,
  w: WeightTensors,
  patches: Tensor,
  text: TextTensors,
  cfg: TinyVlaConfig,
): { world: Tensor; scores: Tensor; xy: Tensor; mapped: Tensor } {
  const first = locatorFirstLook(tf, w, patches, text, cfg);
  const world = first.around ? addSecondLook(tf, w, first.mapped, first.around) : first.mapped;
  return { world, scores: first.scores, xy: first.xy, mapped: first.mapped };
}

/**
 * The locator up to its second look: the table position the map gives, the scores, the image
 * point, and (with `locator.refine`) what the second look reads [B, refineInputs] (no words).
 * Split out because training the second look alone reads the rest as constants (train-refine.ts).
 */
export function locatorFirstLook(
  tf: Tf,
  w: WeightTensors,
  patches: Tensor,
  text: TextTensors,
  cfg: TinyVlaConfig,
): { mapped: Tensor; scores: Tensor; xy: Tensor; around?: Tensor } {
  const W = (name: string): Tensor => {
    const t = w[name];
    if (!t) throw new Error(`missing weight '${name}'`);
    return t;
  };
  const lc = locatorConfig(cfg);
  const { count, side } = patchGrid(lc);
  const dim = (cfg.locator as { dim: number }).dim;
  const B = textRows(text);
  const words = readText(tf, text, W, "locator", cfg);
  const asked = dense(tf, words, W("locator.query.w"), W("locator.query.b"));
  const flat = tf.reshape(patches, [B * count, patches.shape[2] as number]);
  const h = tf.relu(dense(tf, flat, W("locator.patch.w"), W("locator.patch.b")));
  const g = tf.reshape(tf.relu(dense(tf, h, W("locator.mix.w"), W("locator.mix.b"))), [
    B,
    count,
    dim,
  ]);
  // The largest value of each feature anywhere in the view: a small thing seen once (a few
  // patches of 1,024) still counts in full, where a mean would all but erase it.
  const query = cfg.locator?.context
    ? tf.add(asked, dense(tf, tf.max(g, 1), W("locator.context.w"), W("locator.context.b")))
    : asked;
  // A fixed gain on the scores lets the soft-argmax become peaked early in training: from a
  // near-uniform start, the expected position sits at the image centre and learns slowly.
  const gain = cfg.locator?.sharpness ?? 1;
  // Plus a learned score per patch: the one place position enters, so that fixed parts of the
  // scene sharing the object's colour (the arm's blue joints, the table's orange) can be damped.
  const scores = tf.add(
    tf.mul(tf.reshape(matMul(tf, g, tf.expandDims(query, 2)), [B, count]), gain),
    W("locator.score.b"),
  );
  const attn = tf.softmax(
    cfg.locator?.local === undefined ? scores : nearPeak(tf, scores, side, cfg.locator.local),
  );
  const grid = tf.tensor2d(patchCentres(count, side), [count, 2]);
  const centre = matMul(tf, attn, grid);
  let xy = centre;
  if (cfg.locator?.offset) {
    // Where in the patch: read from the patch's features as the words see them, bounded to
    // half a patch (1/side in the [-1, 1] image coordinates) so it cannot jump to a neighbour.
    const seen = tf.reshape(tf.mul(g, tf.expandDims(query, 1)), [B * count, dim]);
    const shift = tf.reshape(
      tf.mul(tf.tanh(dense(tf, seen, W("locator.offset.w"), W("locator.offset.b"))), 1 / side),
      [B, count, 2],
    );
    xy = tf.add(xy, tf.sum(tf.mul(shift, tf.expandDims(attn, 2)), 1));
  }
  const refine = cfg.locator?.refine;
  let seenAround: Tensor | undefined;
  if (refine) {
    // The neighbourhood at each offset, summed over patches by attention: the view around
    // where the locator looked (no words), then the offset head's shift (in patches) and the
    // image point itself (the table's scale changes across the view).
    const r = refine.radius;
    const F = (patches.shape[2] as number) + dim;
    const seen = tf.reshape(tf.concat([tf.reshape(patches, [B, count, F - dim]), g], 2), [
      B,
      side,
      side,
      F,
    ]);
    const padded = tf.pad(seen, [
      [0, 0],
      [r, r],
      [r, r],
      [0, 0],
    ]);
    const weigh = tf.expandDims(attn, 1);
    const around: Tensor[] = [];
    for (let dr = -r; dr <= r; dr++) {
      for (let dc = -r; dc <= r; dc++) {
        const moved = tf.reshape(tf.slice(padded, [0, r + dr, r + dc, 0], [B, side, side, F]), [
          B,
          count,
          F,
        ]);
        around.push(tf.reshape(matMul(tf, weigh, moved), [B, F]));
      }
    }
    around.push(tf.mul(tf.sub(xy, centre), side / 2), xy);
    seenAround = tf.concat(around, 1);
  }
  // With `map: "view"` the map reads what the locator looked at (no words): see the config.
  const about =
    cfg.locator?.map === "view"
      ? tf.reshape(matMul(tf, tf.expandDims(attn, 1), g), [B, dim])
      : words;
  const z0 = tf.relu(
    dense(tf, tf.concat([xy, about], 1), W("locator.map.0.w"), W("locator.map.0.b")),
  );
  const z1 = tf.relu(dense(tf, z0, W("locator.map.1.w"), W("locator.map.1.b")));
  const mapped = dense(tf, z1, W("locator.map.out.w"), W("locator.map.out.b"));
  return { mapped, scores, xy, ...(seenAround ? { around: seenAround } : {}) };
}

/** How far the second look moves the table position at most, in units of the targets' spread. */
export const SECOND_LOOK_REACH = 0.35;

/**
 * `mapped` moved by the second look (`locator.refine`) reading `around` (`locatorFirstLook`).
 * It moves the table position itself, not the image point: the map from image to table is a
 * small network of its own, and its error would stay if only its input moved. Bounded to about
 * 4 cm (`SECOND_LOOK_REACH`): it corrects, it cannot re-point.
 */
export function addSecondLook(tf: Tf, w: WeightTensors, mapped: Tensor, around: Tensor): Tensor {
  const W = (name: string): Tensor => {
    const t = w[name];
    if (!t) throw new Error(`missing weight '${name}'`);
    return t;
  };
  const hid = tf.relu(dense(tf, around, W("locator.refine.0.w"), W("locator.refine.0.b")));
  const look = dense(tf, hid, W("locator.refine.out.w"), W("locator.refine.out.b"));
  return tf.add(mapped, tf.mul(tf.tanh(look), SECOND_LOOK_REACH));
}
