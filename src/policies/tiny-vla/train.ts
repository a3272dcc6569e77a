/**
 * Behaviour cloning for tiny-vla: seeded initialisation, Adam, minibatches drawn by `Rng`, loss =
 * MSE on the chunk's continuous dims (in units of each dim's spread) + BCE on the gripper. On the
 * single-threaded WASM backend the same seed and data give bit-identical weights.
 *
 * @example
 *   const result = await trainTinyVla(set, config, { seed: 0, steps: 3000 });
 *   saveWeights(out, { config, text: units, weights: result.weights });
 */
import { ProvaelError } from "../../core/errors.js";
import { Rng } from "../../core/rng.js";
import { type tf as TF, tfReady } from "./backend.js";
import type { FrameStore } from "./frame-store.js";
import {
  batchTensors,
  forward,
  type HostBatch,
  initWeights,
  locatorConfig,
  locatorOutputs,
  moveDims,
  OFFSET_UNIT,
  patchGrid,
  patchify,
  stateFeatureDim,
  stateFeatures,
  type TinyVlaConfig,
  textTensor,
  type Weights,
  weightShapes,
} from "./model.js";
import { emptyInputs, inputInto, type TextLayout } from "./text-units.js";

/**
 * Training samples in compact host memory. Sample i has camera c's image `images[c].frame(i)`
 * (S·S·3 bytes, already resized to `imageSize`), state [i·stateDim, …), the action
 * chunk `targets` [i·chunk·actionDim, …) and its instruction `tokens` row `textOf[i]`.
 */
export interface TrainingSet {
  count: number;
  images: FrameStore[];
  state: Float32Array;
  targets: Float32Array;
  /** Unit id rows of the instructions, `text.slots` x `text.perWord` ids each (`TextUnits.encode`). */
  tokens: Int32Array;
  /** The text units' layout (absent: v1 words, `maxTokens` ids a row). */
  text?: TextLayout;
  textOf: Int32Array;
  /** Episode of each sample (validation split by episode). */
  episodeOf: Int32Array;
  /** Auxiliary targets, `aux` per sample, NaN where a sample has none. */
  aux?: Float32Array;
  /**
   * "anchored" models: the named object's world position for every sample of its episode (the
   * action head's anchor), NaN where the episode has none.
   */
  anchor?: Float32Array;
}

/**
 * What a training uses where its options say nothing. The manifest records the values a
 * training ran with, so it reads them from here rather than from a copy.
 */
export const TRAIN_DEFAULTS = {
  batchSize: 32,
  learningRate: 2e-3,
  /** Every `stride`-th frame of each episode becomes a sample (offline/training-data.ts). */
  stride: 1,
  shift: 0,
  wordDropout: 0.05,
  stateNoise: 0,
  anchorNoise: 0.015,
} as const;

export interface TrainOptions {
  seed: number;
  steps: number;
  batchSize?: number;
  learningRate?: number;
  /** Final learning rate as a fraction of the first (cosine decay). */
  finalLearningRate?: number;
  /** Weight of the gripper BCE against the movement MSE. */
  gripWeight?: number;
  /** Weight of the auxiliary localisation loss (when the set has auxiliary targets). */
  auxWeight?: number;
  /**
   * Probability of dropping a word in a sample (v1 words: replaced by `<unk>`, so unknown words
   * mean "no word"; subword units: left out of the bag).
   */
  wordDropout?: number;
  /** Random image translation in pixels (at `imageSize`), per sample and camera. */
  shift?: number;
  /** Std of Gaussian noise added to the normalised state. */
  stateNoise?: number;
  /**
   * Std (m) of Gaussian noise on the anchor the action head reads ("anchored" models): at run
   * time the anchor comes from the localisation head and is off by a centimetre or so, and the
   * wrist camera must make up the difference.
   */
  anchorNoise?: number;
  /** Fraction of episodes held out for a validation loss. */
  validation?: number;
  /** Steps between loss records. */
  logEvery?: number;
  /** Start from these weights instead of a fresh initialisation. */
  init?: Weights;
  /**
   * The unit ids (one `tokens` row) a training sample is read with this time, in place of its
   * recorded instruction: a fresh phrasing of its episode's goal (offline/grammar-phrasings.ts).
   * Asked once per sample per batch, with a generator of its own forked from the seed;
   * validation keeps the recorded instructions, so its loss stays comparable across steps.
   */
  phrase?: (sample: number, rng: Rng) => ArrayLike<number>;
  onProgress?: (step: number, steps: number, loss: number) => void;
  /** Aborted: stop after the step in progress and return the weights as they are then. */
  signal?: AbortSignal;
}

/** Steps between chances for a signal handler to run (a step takes tens of milliseconds). */
const YIELD_EVERY = 10;
export const yieldToEvents = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface LossRecord {
  step: number;
  loss: number;
  move: number;
  grip: number;
  /** Auxiliary loss, when trained with one. */
  aux?: number;
  /** Validation loss on held-out episodes, when any were held out. */
  validation?: number;
}

export interface TrainResult {
  weights: Weights;
  history: LossRecord[];
  trainSamples: number;
  validationSamples: number;
  /** Steps taken: `options.steps`, or fewer when the signal stopped training early. */
  stepsDone: number;
}

/** The text layout of a set's id rows, checked against the network's bag width. */
export function textLayoutOf(cfg: TinyVlaConfig, text: TextLayout | undefined): TextLayout {
  const layout: TextLayout = text ?? {
    kind: "words",
    size: cfg.vocabSize,
    slots: cfg.maxTokens,
    perWord: 1,
  };
  if (layout.size !== cfg.vocabSize) {
    throw new ProvaelError(
      "config/invalid",
      `the training text units give ${layout.size}-wide bags, the network reads ${cfg.vocabSize}`,
    );
  }
  return layout;
}

/**
 * Copies sample `i` into row `row` of a host batch, with an optional random shift; `ids`, when
 * given, are the instruction's unit ids instead of the sample's recorded `tokens` row.
 */
function fillRow(
  cfg: TinyVlaConfig,
  layout: TextLayout,
  set: TrainingSet,
  i: number,
  row: number,
  batch: TrainBatch,
  rng: Rng | undefined,
  opts: { shift: number; wordDropout: number; stateNoise: number; anchorNoise: number },
  ids?: ArrayLike<number>,
): void {
  const { count, size } = patchGrid(cfg);
  const S = cfg.imageSize;
  const p = cfg.patch;
  const side = S / p;
  cfg.cameras.forEach((_, c) => {
    const src = (set.images[c] as FrameStore).frame(i);
    const out = batch.patches[c] as Float32Array;
    const dx = rng && opts.shift > 0 ? rng.int(2 * opts.shift + 1) - opts.shift : 0;
    const dy = rng && opts.shift > 0 ? rng.int(2 * opts.shift + 1) - opts.shift : 0;
    let o = row * count * size;
    for (let py = 0; py < side; py++) {
      for (let pxi = 0; pxi < side; pxi++) {
        for (let y = 0; y < p; y++) {
          // Edge pixels are repeated where the shift moves the image off the frame.
          const sy = Math.min(S - 1, Math.max(0, py * p + y + dy));
          for (let x = 0; x < p; x++) {
            const sx = Math.min(S - 1, Math.max(0, pxi * p + x + dx));
            const s = (sy * S + sx) * 3;
            out[o++] = (src[s] as number) / 255 - 0.5;
            out[o++] = (src[s + 1] as number) / 255 - 0.5;
            out[o++] = (src[s + 2] as number) / 255 - 0.5;
          }
        }
      }
    }
  });
  const L = layout.slots * layout.perWord;
  const t = set.textOf[i] as number;
  const drop = rng && opts.wordDropout > 0 ? () => rng.bernoulli(opts.wordDropout) : undefined;
  inputInto(layout, ids ?? set.tokens.subarray(t * L, (t + 1) * L), batch.text, row, drop);
  if (batch.aux && batch.auxMask) {
    for (let k = 0; k < cfg.aux; k++) {
      const v = set.aux?.[i * cfg.aux + k] ?? Number.NaN;
      const ok = Number.isFinite(v);
      const mean = cfg.auxMode === "relative" || !cfg.auxMode ? 0 : (cfg.auxMean?.[k] ?? 0);
      batch.aux[row * cfg.aux + k] = ok ? (v - mean) / (cfg.auxScale[k] ?? 1) : 0;
      batch.auxMask[row * cfg.aux + k] = ok ? 1 : 0;
    }
  }
  const F = stateFeatureDim(cfg);
  stateFeatures(
    cfg,
    set.state.subarray(i * cfg.stateDim, (i + 1) * cfg.stateDim),
    batch.state,
    row * F,
  );
  if (batch.offset) {
    for (let k = 0; k < cfg.aux; k++) {
      const a = set.anchor?.[i * cfg.aux + k] ?? Number.NaN;
      const noise = rng && opts.anchorNoise > 0 ? rng.normal() * opts.anchorNoise : 0;
      const g = set.state[i * cfg.stateDim + k] as number;
      batch.offset[row * cfg.aux + k] = Number.isFinite(a) ? (a + noise - g) / OFFSET_UNIT : 0;
    }
  }
  if (rng && opts.stateNoise > 0) {
    for (let k = 0; k < F; k++) {
      const j = row * F + k;
      batch.state[j] =
        (batch.state[j] as number) + rng.normal() * opts.stateNoise * (cfg.stateStd[k] ?? 1);
    }
  }
}

/** A host batch plus the auxiliary targets (normalised) and their validity mask. */
type TrainBatch = HostBatch & { aux?: Float32Array; auxMask?: Float32Array };

function emptyBatch(
  cfg: TinyVlaConfig,
  layout: TextLayout,
  n: number,
  withAux: boolean,
): TrainBatch {
  const { count, size } = patchGrid(cfg);
  return {
    size: n,
    patches: cfg.cameras.map(() => new Float32Array(n * count * size)),
    text: emptyInputs(layout, n, cfg.textContext !== undefined),
    state: new Float32Array(n * stateFeatureDim(cfg)),
    ...(withAux
      ? { aux: new Float32Array(n * cfg.aux), auxMask: new Float32Array(n * cfg.aux) }
      : {}),
    ...(cfg.auxMode === "anchored" && cfg.auxToHead
      ? { offset: new Float32Array(n * cfg.aux) }
      : {}),
  };
}

/** Trains from `options.init` or a seeded initialisation; returns the weights and loss history. */
export async function trainTinyVla(
  set: TrainingSet,
  cfg: TinyVlaConfig,
  options: TrainOptions,
): Promise<TrainResult> {
  const tf = await tfReady();
  if (set.count === 0) throw new ProvaelError("config/invalid", "the training set is empty");
  const batchSize = options.batchSize ?? TRAIN_DEFAULTS.batchSize;
  const lr0 = options.learningRate ?? TRAIN_DEFAULTS.learningRate;
  const lrEnd = lr0 * (options.finalLearningRate ?? 0.1);
  const gripWeight = options.gripWeight ?? 0.5;
  const withAux = cfg.aux > 0 && set.aux !== undefined;
  const auxWeight = withAux ? (options.auxWeight ?? 1) : 0;
  const logEvery = options.logEvery ?? 50;
  const aug = {
    shift: options.shift ?? TRAIN_DEFAULTS.shift,
    wordDropout: options.wordDropout ?? TRAIN_DEFAULTS.wordDropout,
    stateNoise: options.stateNoise ?? TRAIN_DEFAULTS.stateNoise,
    anchorNoise: options.anchorNoise ?? TRAIN_DEFAULTS.anchorNoise,
  };
  const root = Rng.fromLabel(`tiny-vla:train:${options.seed}`);
  const layout = textLayoutOf(cfg, set.text);

  // Validation split by whole episodes, chosen by the seed.
  const episodes = [...new Set(set.episodeOf)].sort((a, b) => a - b);
  const nVal = Math.floor(episodes.length * (options.validation ?? 0));
  const valEpisodes = new Set(root.fork("split").shuffle(episodes).slice(0, nVal));
  const train: number[] = [];
  const val: number[] = [];
  for (let i = 0; i < set.count; i++)
    (valEpisodes.has(set.episodeOf[i] as number) ? val : train).push(i);
  if (train.length === 0)
    throw new ProvaelError("config/invalid", "no training samples after the split");

  const init = options.init ?? initWeights(cfg, root.fork("init"));
  const vars: Record<string, TF.Variable> = {};
  for (const [name, shape] of weightShapes(cfg)) {
    const data = init.get(name);
    if (!data) throw new ProvaelError("internal/invariant", `missing initial weight '${name}'`);
    vars[name] = tf.variable(tf.tensor(data, shape, "float32"), true, `tiny-vla/${name}`);
  }
  const optimizer = tf.train.adam(lr0);
  const m = moveDims(cfg);
  const A = cfg.actionDim;
  const invScale = tf.tensor1d(cfg.actionScale.slice(0, m).map((s) => 1 / Math.max(s, 1e-3)));

  const lossOf = (batch: TrainBatch, targets: Float32Array) => {
    const input = batchTensors(tf, cfg, batch);
    const out = forward(tf, vars, input, cfg, withAux);
    const tgt = tf.tensor3d(targets, [batch.size, cfg.chunk, A]);
    const tMove = tf.slice(tgt, [0, 0, 0], [batch.size, cfg.chunk, m]);
    const tGrip = tf.cast(
      tf.greater(
        tf.reshape(tf.slice(tgt, [0, 0, m], [batch.size, cfg.chunk, 1]), [batch.size, cfg.chunk]),
        0,
      ),
      "float32",
    );
    const move = tf.mean(tf.square(tf.mul(tf.sub(out.move, tMove), invScale)));
    const grip = tf.mean(tf.sub(tf.softplus(out.grip), tf.mul(tGrip, out.grip)));
    let total = tf.add(move, tf.mul(grip, gripWeight));
    let aux = tf.scalar(0);
    if (withAux && out.aux && batch.aux && batch.auxMask) {
      const mask = tf.tensor2d(batch.auxMask, [batch.size, cfg.aux]);
      const err = tf.mul(
        tf.square(tf.sub(out.aux, tf.tensor2d(batch.aux, [batch.size, cfg.aux]))),
        mask,
      );
      aux = tf.div(tf.sum(err), tf.maximum(tf.sum(mask), 1));
      total = tf.add(total, tf.mul(aux, auxWeight));
    }
    return { move, grip, aux, total };
  };

  const batch = emptyBatch(cfg, layout, batchSize, withAux);
  const targets = new Float32Array(batchSize * cfg.chunk * A);
  const rng = root.fork("batches");
  const phrasings = root.fork("phrasings");
  const history: LossRecord[] = [];
  let accMove = 0;
  let accGrip = 0;
  let accAux = 0;
  let accN = 0;
  const T = cfg.chunk * A;
  const validationLoss = (): number | undefined => {
    if (val.length === 0) return undefined;
    // A fixed, evenly spaced subset keeps validation cheap and comparable across steps.
    const pick = Array.from(
      { length: Math.min(256, val.length) },
      (_, k) => val[Math.floor((k * val.length) / Math.min(256, val.length))] as number,
    );
    let sum = 0;
    for (let s = 0; s < pick.length; s += batchSize) {
      const idx = pick.slice(s, s + batchSize);
      const b = emptyBatch(cfg, layout, idx.length, withAux);
      const t = new Float32Array(idx.length * T);
      idx.forEach((i, r) => {
        fillRow(cfg, layout, set, i, r, b, undefined, aug);
        t.set(set.targets.subarray(i * T, (i + 1) * T), r * T);
      });
      sum += tf.tidy(() => lossOf(b, t).total.dataSync()[0] as number) * idx.length;
    }
    return sum / pick.length;
  };

  let stepsDone = 0;
  for (let step = 1; step <= options.steps; step++) {
    if (options.signal?.aborted) break;
    stepsDone = step;
    const progress = (step - 1) / Math.max(1, options.steps - 1);
    (optimizer as unknown as { learningRate: number }).learningRate =
      lrEnd + 0.5 * (lr0 - lrEnd) * (1 + Math.cos(Math.PI * progress));
    for (let r = 0; r < batchSize; r++) {
      const i = train[rng.int(train.length)] as number;
      fillRow(cfg, layout, set, i, r, batch, rng, aug, options.phrase?.(i, phrasings));
      targets.set(set.targets.subarray(i * T, (i + 1) * T), r * T);
    }
    let parts: [number, number, number] = [0, 0, 0];
    tf.tidy(() => {
      const cost = optimizer.minimize(() => {
        const l = lossOf(batch, targets);
        parts = [
          l.move.dataSync()[0] as number,
          l.grip.dataSync()[0] as number,
          l.aux.dataSync()[0] as number,
        ];
        return l.total as TF.Scalar;
      }, true);
      cost?.dispose();
    });
    accMove += parts[0];
    accGrip += parts[1];
    accAux += parts[2];
    accN++;
    // The loop is synchronous: let a signal handler run now and then, so a stop can be asked.
    if (options.signal && step % YIELD_EVERY === 0) await yieldToEvents();
    // Also log the last step before a stop, so the history ends where the weights are.
    if (step % logEvery === 0 || step === options.steps || options.signal?.aborted) {
      const move = accMove / accN;
      const grip = accGrip / accN;
      const aux = accAux / accN;
      const rec: LossRecord = {
        step,
        loss: move + gripWeight * grip + auxWeight * aux,
        move,
        grip,
        ...(withAux ? { aux } : {}),
      };
      const v = validationLoss();
      if (v !== undefined) rec.validation = v;
      history.push(rec);
      options.onProgress?.(step, options.steps, rec.loss);
      accMove = 0;
      accGrip = 0;
      accAux = 0;
      accN = 0;
    }
  }

  const weights: Weights = new Map();
  for (const [name] of weightShapes(cfg)) {
    const v = vars[name] as TF.Variable;
    weights.set(name, new Float32Array(v.dataSync() as Float32Array));
    v.dispose();
  }
  optimizer.dispose();
  invScale.dispose();
  return {
    weights,
    history,
    trainSamples: train.length,
    validationSamples: val.length,
    stepsDone,
  };
}

/**
 * What the locator learns from: full-resolution first-camera images (`size`x`size` RGB), the
 * instruction's unit ids of each sample (rows as in `TrainingSet.tokens`), the named object's
 * table (x, y), and where that object appears in the image ((column, row) in [0, 1), NaN when
 * unknown or out of view).
 */
export interface LocatorSet {
  size: number;
  count: number;
  images: Uint8Array;
  tokens: Int32Array;
  /** The text units' layout (absent: v1 words). */
  text?: TextLayout;
  world: Float32Array;
  pixel: Float32Array;
}

export interface LocatorOptions {
  seed: number;
  steps: number;
  batchSize?: number;
  learningRate?: number;
  logEvery?: number;
  /** As `TrainOptions.phrase`: the unit ids sample `sample` is read with this time. */
  phrase?: (sample: number, rng: Rng) => ArrayLike<number>;
  /**
   * Start from the locator weights already in `weights` (fine-tuning a trained model) instead
   * of a seeded initialisation: a fine-tune must not throw away what the locator had learned.
   */
  fromWeights?: boolean;
  onProgress?: (step: number, total: number, loss: number) => void;
  /** As `TrainOptions.signal`. */
  signal?: AbortSignal;
}

/**
 * The patch-score target for an object seen at image fraction (u, v): all mass on its patch
 * ("cell"), or split bilinearly over the four nearest patch centres ("bilinear"; at the image
 * border the missing neighbours' share goes to the edge patch). Outside the image: no target.
 */
export function heatmapTarget(
  u: number,
  v: number,
  side: number,
  mode: "cell" | "bilinear",
  out: Float32Array,
): void {
  if (!(u >= 0 && u < 1 && v >= 0 && v < 1)) return;
  if (mode === "cell") {
    out[Math.floor(v * side) * side + Math.floor(u * side)] = 1;
    return;
  }
  const fu = u * side - 0.5;
  const fv = v * side - 0.5;
  const c0 = Math.floor(fu);
  const r0 = Math.floor(fv);
  const a = fu - c0;
  const b = fv - r0;
  const clamp = (k: number) => Math.max(0, Math.min(side - 1, k));
  for (const [dr, dc, w] of [
    [0, 0, (1 - a) * (1 - b)],
    [0, 1, a * (1 - b)],
    [1, 0, (1 - a) * b],
    [1, 1, a * b],
  ] as const) {
    const k = clamp(r0 + dr) * side + clamp(c0 + dc);
    out[k] = (out[k] as number) + w;
  }
}

/** The locator's view of `cfg`, once `set` is known to fit it (its image size, some samples). */
export function checkLocatorSet(set: LocatorSet, cfg: TinyVlaConfig): TinyVlaConfig {
  const lc = locatorConfig(cfg);
  if (lc.imageSize !== set.size) {
    throw new ProvaelError(
      "config/invalid",
      `locator images are ${set.size}px, the model's locator reads ${lc.imageSize}px`,
    );
  }
  if (set.count === 0)
    throw new ProvaelError("config/invalid", "no samples to train the locator on");
  return lc;
}

/**
 * Trains the locator of an "anchored" model (`cfg.locator`), leaving every other weight as it
 * is: a regression on the table position plus, where the pixel is known, a cross-entropy of the
 * patch scores against where the object is (`heatmapTarget`; a much denser signal than the
 * position alone). Returns `weights` with the locator's weights added or replaced, and the loss history.
 */
export async function trainLocator(
  set: LocatorSet,
  cfg: TinyVlaConfig,
  weights: Weights,
  options: LocatorOptions,
): Promise<{ weights: Weights; history: { step: number; loss: number }[]; stepsDone: number }> {
  const tf = await tfReady();
  const lc = checkLocatorSet(set, cfg);
  const { count, size, side } = patchGrid(lc);
  const layout = textLayoutOf(cfg, set.text);
  const L = layout.slots * layout.perWord;
  const root = Rng.fromLabel(`tiny-vla:locator:${options.seed}`);
  const init = initWeights(cfg, root.fork("init"));
  const vars: Record<string, TF.Variable> = {};
  for (const [name, shape] of weightShapes(cfg)) {
    if (!name.startsWith("locator.")) continue;
    const start = options.fromWeights ? weights.get(name) : init.get(name);
    if (!start) throw new ProvaelError("internal/invariant", `missing locator weight '${name}'`);
    vars[name] = tf.variable(tf.tensor(start, shape), true, `locator/${name}`);
  }
  const B = options.batchSize ?? 32;
  const steps = options.steps;
  const lr0 = options.learningRate ?? 3e-3;
  const optimizer = tf.train.adam(lr0);
  const S = set.size * set.size * 3;
  const patches = new Float32Array(B * count * size);
  const texts = emptyInputs(layout, B, cfg.textContext !== undefined);
  const target = new Float32Array(B * cfg.aux);
  const cell = new Float32Array(B * count);
  const rng = root.fork("batches");
  const phrasings = root.fork("phrasings");
  const heatmap = cfg.locator?.heatmap ?? "cell";
  const history: { step: number; loss: number }[] = [];
  let acc = 0;
  let accN = 0;
  let stepsDone = 0;
  for (let step = 1; step <= steps; step++) {
    if (options.signal?.aborted) break;
    stepsDone = step;
    const progress = (step - 1) / Math.max(1, steps - 1);
    (optimizer as unknown as { learningRate: number }).learningRate =
      lr0 * (0.05 + 0.95 * 0.5 * (1 + Math.cos(Math.PI * progress)));
    cell.fill(0);
    for (let r = 0; r < B; r++) {
      const i = rng.int(set.count);
      patchify(lc, set.images.subarray(i * S, (i + 1) * S), patches, r * count * size);
      const ids = options.phrase?.(i, phrasings) ?? set.tokens.subarray(i * L, (i + 1) * L);
      inputInto(layout, ids, texts, r);
      for (let k = 0; k < cfg.aux; k++) {
        const v = set.world[i * cfg.aux + k] as number;
        target[r * cfg.aux + k] = (v - (cfg.auxMean?.[k] ?? 0)) / (cfg.auxScale[k] ?? 1);
      }
      heatmapTarget(
        set.pixel[i * 2] as number,
        set.pixel[i * 2 + 1] as number,
        side,
        heatmap,
        cell.subarray(r * count, (r + 1) * count),
      );
    }
    let value = 0;
    tf.tidy(() => {
      const cost = optimizer.minimize(() => {
        const out = locatorOutputs(
          tf,
          vars,
          tf.tensor3d(patches, [B, count, size]),
          textTensor(tf, cfg, texts, B),
          cfg,
        );
        const mse = tf.mean(tf.square(tf.sub(out.world, tf.tensor2d(target, [B, cfg.aux]))));
        const ce = tf.div(
          tf.neg(tf.sum(tf.mul(tf.tensor2d(cell, [B, count]), tf.logSoftmax(out.scores)))),
          B,
        );
        const loss = tf.add(mse, ce);
        value = loss.dataSync()[0] as number;
        return loss as TF.Scalar;
      }, true);
      cost?.dispose();
    });
    acc += value;
    accN++;
    if (options.signal && step % YIELD_EVERY === 0) await yieldToEvents();
    if (step % (options.logEvery ?? 50) === 0 || step === steps || options.signal?.aborted) {
      history.push({ step, loss: acc / accN });
      options.onProgress?.(step, steps, acc / accN);
      acc = 0;
      accN = 0;
    }
  }
  const out: Weights = new Map(weights);
  for (const [name, v] of Object.entries(vars)) {
    out.set(name, new Float32Array(v.dataSync() as Float32Array));
    v.dispose();
  }
  optimizer.dispose();
  return { weights: out, history, stepsDone };
}
