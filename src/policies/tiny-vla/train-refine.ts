/**
 * Training the locator's second look (`locator.refine`) alone, every other weight held: the
 * rest of the locator is then a constant function of each sample, so what the second look reads
 * (`locatorFirstLook`'s `around`) is computed once per sample and phrasing and the small network
 * trains on those rows, in seconds instead of a forward pass of the whole locator at every step.
 *
 * The rows are standardised (each input to zero mean and unit spread over the rows) while it
 * trains, and the standardisation is folded into the first layer when it ends, so the weights
 * it writes read the raw rows like any other tiny-vla's. Without it one training of three found
 * a correction: the inputs are 1,804 correlated, mostly positive values (the patch features sit
 * at 0.6 +- 0.6), Adam moves every weight by about its rate at each step, so one step moves a
 * hidden unit's input by several units and the ReLUs went dead within the first steps (all 16
 * in two seeds, 15 in the third).
 *
 * @example
 *   const { weights } = await trainSecondLook(set, cfg, trained, { seed: 2, steps: 2500 });
 */
import { ProvaelError } from "../../core/errors.js";
import { Rng } from "../../core/rng.js";
import { type tf as TF, tfReady } from "./backend.js";
import {
  addSecondLook,
  locatorConfig,
  locatorFirstLook,
  patchGrid,
  patchify,
  type TinyVlaConfig,
  textTensor,
  type Weights,
  weightShapes,
} from "./model.js";
import { emptyInputs, inputInto } from "./text-units.js";
import {
  checkLocatorSet,
  type LocatorOptions,
  type LocatorSet,
  textLayoutOf,
  yieldToEvents,
} from "./train.js";

/**
 * Phrasings read per sample when training draws them (`LocatorOptions.phrase`): each step draws
 * one of them. Measured on the shipped locator's 4,800 samples: 1, 2 and 4 phrasings give the
 * same held-out error within seed noise; 4 keeps the words' variety at a fixed cost.
 */
export const SECOND_LOOK_PHRASINGS = 4;

/** Inputs that never vary over the rows (a patch feature always zero) are divided by this, not 0. */
const LEAST_SPREAD = 0.01;

/** Rows read per forward pass of the held locator while the inputs are read. */
const READ_BATCH = 32;

const NAMES = {
  w0: "locator.refine.0.w",
  b0: "locator.refine.0.b",
  w1: "locator.refine.out.w",
  b1: "locator.refine.out.b",
} as const;

export interface SecondLookOptions extends Omit<LocatorOptions, "fromWeights"> {
  /** Rows read so far of all (phrasings x samples), while the held locator reads them. */
  onRead?: (done: number, total: number) => void;
}

/**
 * Trains `locator.refine` on the table position alone (mean squared error in units of the
 * targets' spread), starting from the second look's weights in `weights` read as weights on
 * standardised inputs. Returns `weights` with the second look's replaced.
 */
export async function trainSecondLook(
  set: LocatorSet,
  cfg: TinyVlaConfig,
  weights: Weights,
  options: SecondLookOptions,
): Promise<{ weights: Weights; history: { step: number; loss: number }[]; stepsDone: number }> {
  const tf = await tfReady();
  if (!cfg.locator?.refine) {
    throw new ProvaelError("config/invalid", "this tiny-vla's locator has no second look to train");
  }
  checkLocatorSet(set, cfg);
  const weight = (name: string): Float32Array => {
    const w = weights.get(name);
    if (!w) throw new ProvaelError("internal/invariant", `missing locator weight '${name}'`);
    return w;
  };
  // The same seed labels as `trainLocator`: a seed names one draw of batches and phrasings.
  const root = Rng.fromLabel(`tiny-vla:locator:${options.seed}`);
  const read = await readRows(tf, set, cfg, weights, root.fork("phrasings"), options);
  if (!read) return { weights, history: [], stepsDone: 0 };
  const { around, mapped, width: F, rows } = read;
  const { mean, spread } = standardisation(around, F);
  const aux = cfg.aux;
  const target = new Float32Array(set.count * aux);
  for (let i = 0; i < set.count; i++) {
    for (let k = 0; k < aux; k++) {
      const v = set.world[i * aux + k] as number;
      target[i * aux + k] = (v - (cfg.auxMean?.[k] ?? 0)) / (cfg.auxScale[k] ?? 1);
    }
  }
  const shapes = new Map(weightShapes(cfg));
  const vars: Record<string, TF.Variable> = {};
  for (const name of Object.values(NAMES)) {
    vars[name] = tf.variable(
      tf.tensor(weight(name), shapes.get(name) as number[]),
      true,
      `locator/${name}`,
    );
  }
  const B = options.batchSize ?? 32;
  const lr0 = options.learningRate ?? 1e-3;
  const optimizer = tf.train.adam(lr0);
  const rng = root.fork("batches");
  const xs = new Float32Array(B * F);
  const ms = new Float32Array(B * aux);
  const ts = new Float32Array(B * aux);
  const history: { step: number; loss: number }[] = [];
  let acc = 0;
  let accN = 0;
  let stepsDone = 0;
  const steps = options.steps;
  for (let step = 1; step <= steps; step++) {
    if (options.signal?.aborted) break;
    stepsDone = step;
    const progress = (step - 1) / Math.max(1, steps - 1);
    (optimizer as unknown as { learningRate: number }).learningRate =
      lr0 * (0.05 + 0.95 * 0.5 * (1 + Math.cos(Math.PI * progress)));
    for (let r = 0; r < B; r++) {
      const i = rng.int(set.count);
      const row = rng.int(rows / set.count) * set.count + i;
      for (let f = 0; f < F; f++) {
        xs[r * F + f] =
          ((around[row * F + f] as number) - (mean[f] as number)) / (spread[f] as number);
      }
      for (let k = 0; k < aux; k++) {
        ms[r * aux + k] = mapped[row * aux + k] as number;
        ts[r * aux + k] = target[i * aux + k] as number;
      }
    }
    let value = 0;
    tf.tidy(() => {
      const cost = optimizer.minimize(
        () => {
          const world = addSecondLook(tf, vars, tf.tensor2d(ms, [B, aux]), tf.tensor2d(xs, [B, F]));
          const mse = tf.mean(tf.square(tf.sub(world, tf.tensor2d(ts, [B, aux]))));
          value = mse.dataSync()[0] as number;
          return mse as TF.Scalar;
        },
        true,
        Object.values(vars),
      );
      cost?.dispose();
    });
    acc += value;
    accN++;
    if (options.signal && step % 200 === 0) await yieldToEvents();
    if (step % (options.logEvery ?? 50) === 0 || step === steps || options.signal?.aborted) {
      history.push({ step, loss: acc / accN });
      options.onProgress?.(step, steps, acc / accN);
      acc = 0;
      accN = 0;
    }
  }
  const trained = Object.fromEntries(
    Object.entries(vars).map(([name, v]) => [name, new Float32Array(v.dataSync() as Float32Array)]),
  );
  for (const v of Object.values(vars)) v.dispose();
  optimizer.dispose();
  const out: Weights = new Map(weights);
  const folded = foldStandardisation(
    trained[NAMES.w0] as Float32Array,
    trained[NAMES.b0] as Float32Array,
    mean,
    spread,
  );
  out.set(NAMES.w0, folded.w);
  out.set(NAMES.b0, folded.b);
  out.set(NAMES.w1, trained[NAMES.w1] as Float32Array);
  out.set(NAMES.b1, trained[NAMES.b1] as Float32Array);
  return { weights: out, history, stepsDone };
}

/**
 * What the second look reads of every sample (`SECOND_LOOK_PHRASINGS` drawn phrasings each, or
 * the recorded instruction once), with the held locator's table position: rows are
 * phrasing-major (row = phrasing x count + sample). Undefined when stopped while reading.
 */
async function readRows(
  tf: typeof TF,
  set: LocatorSet,
  cfg: TinyVlaConfig,
  weights: Weights,
  phrasings: Rng,
  options: SecondLookOptions,
): Promise<
  { around: Float32Array; mapped: Float32Array; width: number; rows: number } | undefined
> {
  const lc = locatorConfig(cfg);
  const { count, size } = patchGrid(lc);
  const layout = textLayoutOf(cfg, set.text);
  const L = layout.slots * layout.perWord;
  const held: Record<string, TF.Tensor> = {};
  for (const [name, shape] of weightShapes(cfg)) {
    const w = weights.get(name);
    if (name.startsWith("locator.") && !name.startsWith("locator.refine.") && w)
      held[name] = tf.tensor(w, shape);
  }
  const passes = options.phrase ? SECOND_LOOK_PHRASINGS : 1;
  const rows = passes * set.count;
  const S = set.size * set.size * 3;
  const aux = cfg.aux;
  let around: Float32Array | undefined;
  const mapped = new Float32Array(rows * aux);
  let width = 0;
  try {
    for (let pass = 0; pass < passes; pass++) {
      for (let start = 0; start < set.count; start += READ_BATCH) {
        if (options.signal?.aborted) return undefined;
        const n = Math.min(READ_BATCH, set.count - start);
        const patches = new Float32Array(n * count * size);
        const texts = emptyInputs(layout, n, cfg.textContext !== undefined);
        for (let r = 0; r < n; r++) {
          const i = start + r;
          patchify(lc, set.images.subarray(i * S, (i + 1) * S), patches, r * count * size);
          const ids = options.phrase?.(i, phrasings) ?? set.tokens.subarray(i * L, (i + 1) * L);
          inputInto(layout, ids, texts, r);
        }
        const [seen, table] = tf.tidy(() => {
          const first = locatorFirstLook(
            tf,
            held,
            tf.tensor3d(patches, [n, count, size]),
            textTensor(tf, cfg, texts, n),
            cfg,
          );
          if (!first.around) throw new ProvaelError("internal/invariant", "no second look");
          return [first.around.dataSync() as Float32Array, first.mapped.dataSync() as Float32Array];
        });
        if (!around) {
          width = seen.length / n;
          around = new Float32Array(rows * width);
        }
        const row = pass * set.count + start;
        around.set(seen, row * width);
        mapped.set(table, row * aux);
        options.onRead?.(row + n, rows);
        if (options.signal) await yieldToEvents();
      }
    }
  } finally {
    for (const t of Object.values(held)) t.dispose();
  }
  return { around: around as Float32Array, mapped, width, rows };
}

/** Each input's mean and spread over the rows (the spread at least `LEAST_SPREAD`). */
export function standardisation(
  rows: Float32Array,
  width: number,
): { mean: Float32Array; spread: Float32Array } {
  const n = rows.length / width;
  const sum = new Float64Array(width);
  const sq = new Float64Array(width);
  for (let r = 0; r < n; r++) {
    for (let f = 0; f < width; f++) {
      const v = rows[r * width + f] as number;
      sum[f] = (sum[f] as number) + v;
      sq[f] = (sq[f] as number) + v * v;
    }
  }
  const mean = new Float32Array(width);
  const spread = new Float32Array(width);
  for (let f = 0; f < width; f++) {
    const m = (sum[f] as number) / n;
    mean[f] = m;
    spread[f] = Math.max(LEAST_SPREAD, Math.sqrt(Math.max(0, (sq[f] as number) / n - m * m)));
  }
  return { mean, spread };
}

/**
 * A first layer trained on standardised inputs ((x - mean) / spread) as one that reads x:
 * w'[f, h] = w[f, h] / spread[f] and b'[h] = b[h] - sum_f mean[f] / spread[f] * w[f, h].
 */
export function foldStandardisation(
  w: Float32Array,
  b: Float32Array,
  mean: Float32Array,
  spread: Float32Array,
): { w: Float32Array; b: Float32Array } {
  const H = b.length;
  const F = mean.length;
  const outW = new Float32Array(F * H);
  const shift = new Float64Array(H);
  for (let f = 0; f < F; f++) {
    const s = spread[f] as number;
    const m = mean[f] as number;
    for (let h = 0; h < H; h++) {
      const v = w[f * H + h] as number;
      outW[f * H + h] = v / s;
      shift[h] = (shift[h] as number) + (m / s) * v;
    }
  }
  const outB = Float32Array.from(b, (v, h) => v - (shift[h] as number));
  return { w: outW, b: outB };
}
