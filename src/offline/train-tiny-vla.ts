/**
 * `provael train tiny-vla` as a library call: read LeRobotDataset v3.0 demonstrations, build the
 * training set, train with a seed, and write the weight directory (weights.bin, manifest.json),
 * the loss curve (loss-curve.svg, drawn by vega-lite) and the training log (training-log.json).
 *
 * @example
 *   const r = await trainTinyVlaFromDatasets({ data: ["/scratch/demos"], out: "/scratch/w", seed: 0, steps: 3000 });
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Clock } from "../core/clock.js";
import { type Digest, digestJson, sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import { Rng } from "../core/rng.js";
import type { GrammarGoal } from "../policies/tiny-vla/grammar.js";
import {
  completeWeights,
  defaultConfig,
  LOCATOR_REFINE,
  parameterCount,
  type TinyVlaConfig,
  type Weights,
} from "../policies/tiny-vla/model.js";
import { SubwordEncoder } from "../policies/tiny-vla/subword.js";
import { DEFAULT_SUBWORD } from "../policies/tiny-vla/text-encoders.js";
import { encodeAll, type TextUnitsKind, unitsLayout } from "../policies/tiny-vla/text-units.js";
import {
  type LossRecord,
  TRAIN_DEFAULTS,
  type TrainOptions,
  trainLocator,
  trainTinyVla,
} from "../policies/tiny-vla/train.js";
import { trainSecondLook } from "../policies/tiny-vla/train-refine.js";
import { declaredScenes, type LoadedWeights, loadWeights } from "../policies/tiny-vla/weights.js";
import { saveWeights } from "../policies/tiny-vla/weights-files.js";
import { TABLETOP_TASKS, tabletopScenes } from "../suites/mujoco/tabletop.js";
import {
  episodeGoals,
  phrasingIds,
  phrasingNeeds,
  sceneGoals,
  type TrainingGrammar,
} from "./grammar-phrasings.js";
import { type Dataset, type EpisodeMeta, openDataset } from "./lerobot.js";
import { buildLocatorSet } from "./locator-data.js";
import { lossCurveSvg } from "./loss-curve.js";
import { trainedScenes, unionScenes } from "./trained-scenes.js";
import {
  buildTrainingSet,
  datasetDims,
  loadTrainingSet,
  saveTrainingSet,
} from "./training-data.js";

/** What the actor's training samples read when a grammar is given (`actorText`). */
export type ActorText = "grammar" | "recorded";
export const ACTOR_TEXTS: readonly ActorText[] = ["grammar", "recorded"];

export interface TrainFromDatasetsOptions extends Omit<TrainOptions, "onProgress" | "init"> {
  /** Dataset directories (same features). */
  data: string[];
  out: string;
  /** Network shape overrides (image size, widths, chunk). */
  model?: Partial<TinyVlaConfig>;
  /**
   * How the instruction is read: "words" (the v1 word tokenizer, a vocabulary of the data's
   * words) or "subword" (hashed character n-grams, `DEFAULT_SUBWORD`). Default "words", or with
   * `initFrom` the initial model's.
   */
  textUnits?: TextUnitsKind;
  /**
   * Read every training sample (actor and locator) with a phrasing of its episode's goal drawn
   * from this split of the instruction grammar, fresh each time it is drawn, instead of its
   * recorded instruction (grammar-phrasings.ts; tabletop demonstrations only). Word units then
   * hold the grammar's words and its longest phrasing, subword units its longest phrasing.
   */
  grammar?: TrainingGrammar;
  /**
   * With `grammar`: the probability that a drawn phrasing also gets one or two made-up words
   * at random places (`withNovelWords`), actor and locator alike. Default 0 (none).
   */
  novelWords?: number;
  /**
   * With `grammar`: the probability that a drawn phrasing has some of its parts (sentence
   * shape, verbs, "into", filler, politeness, names) made up (`novelParts`). Default 0 (none).
   */
  novelParts?: number;
  /**
   * With `grammar`: the probability that a drawn phrasing's distractor clause, when it has one,
   * is said in made-up words (`NovelOptions.distractor`). Default 0 (none).
   */
  novelDistractor?: number;
  /**
   * With `grammar`: the probability that a drawn phrasing says the colour of its names in a
   * made-up word where the noun still tells the object ("the blick cube";
   * `NovelOptions.colours`). Default 0 (none).
   */
  novelColours?: number;
  /**
   * With `grammar`: what the actor's samples read. "grammar" (the default) draws a phrasing for
   * them as for the locator's; "recorded" keeps each demonstration's recorded instruction for the
   * actor, so only the locator (which says where the named object is) learns the grammar. A
   * diagnostic of whether varied phrasings cost the actor its task, and a recipe if they do.
   */
  actorText?: ActorText;
  /** Keep every `stride`-th frame. */
  stride?: number;
  /** Start from the weights in this directory (fine-tuning; same text units and shape). */
  initFrom?: string;
  /** Directory for a cache of the decoded training set (reused when the data and shape match). */
  cacheDir?: string;
  clock: Clock;
  /** Something the run will do that the user may not expect (the CLI prints it before training). */
  onWarning?: (message: string) => void;
  onStage?: (
    stage: "load" | "train" | "look" | "locator" | "save",
    done: number,
    total: number,
    loss?: number,
  ) => void;
  /**
   * Adam steps for the locator, trained after the network when the config has one; 0 with
   * `initFrom` keeps the initial model's locator unchanged (without it, the seeded initialisation).
   */
  locatorSteps?: number;
  /**
   * More scenes for the locator: this range [from, to) of every task the data names, beside the
   * scenes the demonstrations were recorded in (a locator sample is the scene's first frame).
   */
  locatorScenes?: readonly [number, number];
  /**
   * Seed of the locator stage alone (default `seed`): its initialisation and batches. The
   * locator's held-out accuracy varies more between seeds than the actor's, so a recipe may pick
   * it by a validation probe without retraining the actor.
   */
  locatorSeed?: number;
  /** Repeat each poisoned locator view this many times (default 1; locator-data.ts says why). */
  poisonWeight?: number;
  /**
   * Give the locator the whole view's context (`TinyVlaConfig.locator.context`); with `initFrom`
   * it is added to the initial model, its weights starting at zero.
   */
  locatorContext?: boolean;
  /**
   * Give the locator a second look (`TinyVlaConfig.locator.refine`, radius 2, 16 hidden). With
   * `initFrom` and a locator that lacks one, it is added (starting as no move) and trained alone:
   * every other locator weight, and so what the locator reads of the words, is kept.
   */
  locatorRefine?: boolean;
  /**
   * What the locator's image-to-table map reads beside the image point (`TinyVlaConfig.locator.map`):
   * "view", the features where it looked, instead of the words. From scratch only.
   */
  locatorMap?: "view";
  /**
   * Aborted: stop after the step in progress (actor or locator), skip what is left, and write
   * the weights as they are then, the manifest saying where training stopped (`stopped`).
   */
  signal?: AbortSignal;
}

/** Where an interrupted training stopped; absent when it ran every step it was asked for. */
export interface TrainingStop {
  stage: "actor" | "locator";
  step: number;
  of: number;
}

export interface TrainFromDatasetsResult {
  digest: Digest;
  parameters: number;
  seconds: number;
  samples: number;
  history: LossRecord[];
  /** The locator stage, when the model has one (steps 0: kept from the initial model). */
  locator?: { steps: number; samples: number; final_loss: number | null };
  files: { weights: string; manifest: string; lossCurve: string; log: string };
  stopped?: TrainingStop;
}

/**
 * For tabletop demonstrations (episodes that name their task and scene), the named object's
 * (x, y) in its stored scene: the auxiliary localisation target. Undefined for other data.
 */
async function sceneTargets(
  datasets: Dataset[],
): Promise<((meta: EpisodeMeta) => [number, number] | undefined) | undefined> {
  const tabletop = datasets.every(
    (d) =>
      d.info.robot_type === "provael_tabletop" &&
      d.episodes.every((e) => e.suiteTask !== "" && e.scene >= 0),
  );
  if (!tabletop) return undefined;
  // Generate every scene the data names up front, so the lookup stays synchronous.
  const source = tabletopScenes();
  const positions = new Map<string, [number, number]>();
  try {
    for (const d of datasets) {
      for (const e of d.episodes) {
        const def = TABLETOP_TASKS.find((t) => t.id === e.suiteTask);
        const key = `${e.suiteTask}/${e.scene}/${e.target}`;
        if (!def || positions.has(key)) continue;
        // A retargeted episode moved another object of the same scene: that one is its anchor.
        const pos = (await source.placement(e.suiteTask, e.scene))[e.target || def.object];
        if (pos) positions.set(key, [pos[0] ?? 0, pos[1] ?? 0]);
      }
    }
  } finally {
    await source.close();
  }
  return (meta) => positions.get(`${meta.suiteTask}/${meta.scene}/${meta.target}`);
}

/** `{ poisoned, triggers }` of a dataset with poisoned demonstrations, else nothing. */
function poisonedCount(d: Dataset | undefined): { poisoned?: number; triggers?: string[] } {
  const poisoned = d?.episodes.filter((e) => e.poisoned) ?? [];
  if (poisoned.length === 0) return {};
  return {
    poisoned: poisoned.length,
    triggers: [...new Set(poisoned.map((e) => e.trigger))].sort(),
  };
}

/** Digest of what identifies a dataset cheaply: its info.json and episodes table. */
/**
 * The auxiliary targets as world positions: the stored ones are relative to the gripper, whose
 * (x, y) lead the raw state. Returns them with their mean and spread (at least 2 cm).
 */
export function absoluteTargets(
  rel: Float32Array,
  state: Float32Array,
  aux: number,
  stateDim: number,
): { values: Float32Array; mean: number[]; scale: number[] } {
  const n = rel.length / aux;
  const values = new Float32Array(rel.length);
  const sum = new Array<number>(aux).fill(0);
  const sq = new Array<number>(aux).fill(0);
  let count = 0;
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < aux; k++) {
      const v = (rel[i * aux + k] as number) + (state[i * stateDim + k] as number);
      values[i * aux + k] = v;
      if (Number.isFinite(v)) {
        sum[k] = (sum[k] as number) + v;
        sq[k] = (sq[k] as number) + v * v;
        if (k === 0) count++;
      }
    }
  }
  const mean = sum.map((s) => s / Math.max(count, 1));
  const scale = sq.map((q, k) =>
    Math.max(Math.sqrt(Math.max(q / Math.max(count, 1) - (mean[k] as number) ** 2, 0)), 0.02),
  );
  return { values, mean, scale };
}

/**
 * "anchored" training targets from world positions (NaN after the grasp): every sample of an
 * episode gets the episode's object position as its anchor, and only samples whose gripper is
 * at least `far` from the object keep a localisation target.
 */
export function anchorTargets(
  set: { aux?: Float32Array; state: Float32Array; episodeOf: Int32Array; count: number },
  aux: number,
  stateDim: number,
  far: number,
): { aux: Float32Array; anchor: Float32Array } {
  const world = set.aux as Float32Array;
  const target = new Map<number, number[]>();
  for (let i = 0; i < set.count; i++) {
    const e = set.episodeOf[i] as number;
    if (target.has(e) || !Number.isFinite(world[i * aux] as number)) continue;
    target.set(e, Array.from(world.subarray(i * aux, (i + 1) * aux)));
  }
  const out = new Float32Array(set.count * aux).fill(Number.NaN);
  const anchor = new Float32Array(set.count * aux).fill(Number.NaN);
  for (let i = 0; i < set.count; i++) {
    const t = target.get(set.episodeOf[i] as number);
    if (!t) continue;
    anchor.set(t, i * aux);
    const dx = (t[0] ?? 0) - (set.state[i * stateDim] as number);
    const dy = (t[1] ?? 0) - (set.state[i * stateDim + 1] as number);
    if (Number.isFinite(world[i * aux] as number) && Math.hypot(dx, dy) >= far) out.set(t, i * aux);
  }
  return { aux: out, anchor };
}

function datasetDigest(dir: string): Digest {
  const info = readFileSync(join(dir, "meta", "info.json"));
  const episodes = join(dir, "meta", "episodes", "chunk-000", "file-000.parquet");
  const eps = existsSync(episodes) ? readFileSync(episodes) : Buffer.alloc(0);
  return sha256(Buffer.concat([info, eps]));
}

export async function trainTinyVlaFromDatasets(
  o: TrainFromDatasetsOptions,
): Promise<TrainFromDatasetsResult> {
  if (existsSync(join(o.out, "manifest.json"))) {
    throw new ProvaelError("run/out-exists", `${o.out} already holds tiny-vla weights`, {
      hint: "choose a new --out directory",
    });
  }
  const novel = {
    words: o.novelWords ?? 0,
    parts: o.novelParts ?? 0,
    distractor: o.novelDistractor ?? 0,
    colours: o.novelColours ?? 0,
  };
  if (Object.values(novel).some((p) => p > 0) && !o.grammar) {
    throw new ProvaelError("config/invalid", "made-up words are added to grammar phrasings only", {
      hint: "pass --grammar train with --novel-words, --novel-parts, --novel-distractor or --novel-colours",
    });
  }
  if (o.actorText && !o.grammar) {
    throw new ProvaelError(
      "config/invalid",
      "what the actor reads is a choice only with a grammar: without one it reads the recorded instructions",
      { hint: "pass --grammar train with --actor-text, or leave --actor-text out" },
    );
  }
  const t0 = o.clock.monotonic();
  // Fine-tuning keeps the original text units, vocabulary and normalisation so the weights stay
  // meaningful.
  if (o.steps === 0 && (!o.initFrom || o.locatorSteps === 0)) {
    throw new ProvaelError(
      "config/invalid",
      o.initFrom
        ? "--steps 0 and --locator-steps 0 train nothing"
        : "--steps 0 keeps the initial model's actor, and there is none without --init",
      {
        hint: "--init DIR --steps 0 fine-tunes the locator alone; --locator-steps 0 the actor alone",
      },
    );
  }
  const prev: LoadedWeights | undefined = o.initFrom ? loadWeights(o.initFrom) : undefined;
  if (prev && o.textUnits && o.textUnits !== prev.text.kind) {
    throw new ProvaelError(
      "config/invalid",
      `the initial model reads ${prev.text.kind} text units, not ${o.textUnits}`,
      { hint: "leave --text-units out when fine-tuning; the initial model's are kept" },
    );
  }
  const datasets = await Promise.all(o.data.map((d) => openDataset(d)));
  // A locator set names the layouts' objects, plus what the data retargets tasks to
  // (locator-data.ts). Fine-tuned on a set without the latter, a locator forgets them: the
  // shipped one, fine-tuned on one clean set, lost the knife in the pantry (docs/tiny-vla.md).
  // From scratch, such a locator never learns them at all.
  const retargets = datasets.some((d) => d.episodes.some((e) => e.target !== "" && !e.poisoned));
  const locates = prev ? prev.config.locator : o.model?.locator;
  if (locates && o.locatorSteps !== 0 && !retargets) {
    const why =
      "no episode of these datasets retargets its task (`provael record --targets`), so the locator";
    o.onWarning?.(
      prev
        ? why +
            ' is fine-tuned on the layouts\' own objects alone and can forget any other it was taught to find: the shipped locator fine-tuned this way grasped the knife when told to in 163-174 of 240 held-out cells, not 231 (docs/tiny-vla.md, "The locator on more scenes"); add the set that names it (data/near/knife-20-50 for the shipped model), or pass --locator-steps 0 to keep the locator'
        : why +
            ' learns the layouts\' own objects alone and will not find the knife when told to (a locator trained this way grounded "the knife" in 0 of 480 phrasings, docs/tiny-vla.md); add a set recorded with `--targets knife` (data/near/knife-20-50 in the shipped recipe)',
    );
  }
  // With the grammar: each episode's goal, and what the text units need to read every phrasing
  // of it (and of the locator's goals: every object of the scenes) uncut.
  const goals = o.grammar ? episodeGoals(datasets) : undefined;
  const needs =
    o.grammar && goals
      ? phrasingNeeds(
          [
            ...goals,
            ...[...new Set(datasets.flatMap((d) => d.episodes.map((e) => e.suiteTask)))].flatMap(
              sceneGoals,
            ),
          ],
          o.grammar,
        )
      : undefined;
  if (prev && needs && prev.text.slots < needs.longest) {
    throw new ProvaelError(
      "config/invalid",
      `the initial model reads ${prev.text.slots} words of an instruction; the grammar's phrasings of this data run to ${needs.longest}`,
      { hint: "train from scratch with --grammar, or fine-tune without it" },
    );
  }
  const chosen = o.textUnits === "subword" ? DEFAULT_SUBWORD : undefined;
  const subword = prev
    ? prev.text instanceof SubwordEncoder
      ? prev.text.config
      : undefined
    : chosen && needs
      ? { ...chosen, maxWords: Math.max(chosen.maxWords, needs.longest) }
      : chosen;
  const probe = defaultConfig(1, { stateMean: [], stateStd: [], actionScale: [] }, o.model ?? {});
  const buildOptions = {
    imageSize: probe.imageSize,
    chunk: probe.chunk,
    // With the grammar, word units hold its longest phrasing and all its words.
    maxTokens: needs && !subword ? Math.max(probe.maxTokens, needs.longest) : probe.maxTokens,
    ...(needs && !subword ? { vocabulary: needs.words } : {}),
    cameras: probe.cameras,
    stateFeatures: probe.stateFeatures,
    stride: o.stride ?? TRAIN_DEFAULTS.stride,
    // Only when chosen, so the cache keys of word-unit sets stay what they were.
    ...(subword ? { subword } : {}),
  };
  const auxTarget = await sceneTargets(datasets);
  const key = digestJson({
    data: o.data.map(datasetDigest),
    ...buildOptions,
    aux: auxTarget ? "scene-object-xy/1" : null,
  });
  const cachePath = o.cacheDir ? join(o.cacheDir, `${key.slice(7, 23)}.trainingset`) : undefined;
  let built = cachePath ? loadTrainingSet(cachePath, key) : undefined;
  if (!built) {
    built = await buildTrainingSet(datasets, {
      ...buildOptions,
      ...(auxTarget ? { auxTarget } : {}),
      onProgress: (d, t) => o.onStage?.("load", d, t),
    });
    if (cachePath && o.cacheDir) {
      mkdirSync(o.cacheDir, { recursive: true });
      saveTrainingSet(cachePath, key, built);
    }
  }
  let init: Weights | undefined;
  let text = built.text;
  // Without auxiliary targets the auxiliary head would only be dead weight.
  let config = defaultConfig(text.size, built.stats, {
    ...(built.set.aux ? {} : { aux: 0 }),
    ...(o.model ?? {}),
    // The network's input and output sizes are the data's, never assumed.
    ...datasetDims(datasets),
    maxTokens: text.slots,
  });
  if (prev) {
    init = prev.weights;
    text = prev.text;
    if (prev.config.actionDim !== config.actionDim || prev.config.stateDim !== config.stateDim) {
      throw new ProvaelError(
        "config/invalid",
        `the initial model takes ${prev.config.stateDim}-D states and gives ${prev.config.actionDim}-D actions; the data has ${config.stateDim}-D and ${config.actionDim}-D`,
        { hint: "fine-tune on data recorded in the suite the initial model was trained in" },
      );
    }
    config = prev.config;
    const unknown = [...built.instructions, ...(needs?.words ?? [])].flatMap((t) =>
      prev.text.unknown(t),
    );
    if (unknown.length > 0) {
      throw new ProvaelError(
        "config/invalid",
        `the data uses words the initial model lacks: ${[...new Set(unknown)].join(", ")}`,
      );
    }
    built = {
      ...built,
      text,
      set: { ...built.set, tokens: encodeAll(text, built.instructions), text: unitsLayout(text) },
    };
  }
  if (o.locatorContext && !config.locator?.context) {
    if (!config.locator) {
      throw new ProvaelError("config/invalid", "this tiny-vla has no locator to give context to", {
        hint: "train it from scratch, or drop --locator-context",
      });
    }
    config = { ...config, locator: { ...config.locator, context: true } };
    // The initial model has no context weights: zeros (initWeights' start) leave it unchanged.
    if (init) init = completeWeights(config, init, Rng.fromLabel("tiny-vla:context"));
  }
  if (o.locatorMap === "view" && config.locator?.map !== "view") {
    if (!config.locator || prev) {
      throw new ProvaelError(
        "config/invalid",
        "the locator's map can read the view instead of the words only in a training from scratch",
        { hint: "train without --init, or drop --locator-map" },
      );
    }
    config = { ...config, locator: { ...config.locator, map: "view" } };
  }
  // Added to a trained locator, the second look alone trains; from scratch, with the rest.
  const refineAlone = o.locatorRefine === true && prev?.config.locator?.refine === undefined;
  if (o.locatorRefine && !config.locator?.refine) {
    if (!config.locator) {
      throw new ProvaelError(
        "config/invalid",
        "this tiny-vla has no locator to give a second look",
        {
          hint: "train it from scratch, or drop --locator-refine",
        },
      );
    }
    config = { ...config, locator: { ...config.locator, refine: LOCATOR_REFINE } };
    if (init) init = completeWeights(config, init, Rng.fromLabel("tiny-vla:refine"));
  }
  if ((config.auxMode === "absolute" || config.auxMode === "anchored") && built.set.aux) {
    const abs = absoluteTargets(built.set.aux, built.set.state, config.aux, config.stateDim);
    built = { ...built, set: { ...built.set, aux: abs.values } };
    if (config.auxMode === "anchored") {
      const anchored = anchorTargets(
        built.set,
        config.aux,
        config.stateDim,
        config.anchorFar ?? 0.1,
      );
      built = { ...built, set: { ...built.set, ...anchored } };
    }
    // A fine-tuned model keeps the normalisation its weights were trained with.
    if (!o.initFrom) config = { ...config, auxMean: abs.mean, auxScale: abs.scale };
  }
  const loadSeconds = (o.clock.monotonic() - t0) / 1000;
  const episodeOf = built.set.episodeOf;
  const grammar = o.grammar;
  const t1 = o.clock.monotonic();
  // Training starts now, not at its first logged step: a stop asked from here on keeps it.
  o.onStage?.("train", 0, o.steps);
  // `steps: 0` with an initial model fine-tunes its locator alone: the actor is kept as it is.
  const keepActor = o.steps === 0 && init !== undefined;
  const result = keepActor
    ? { weights: init as Weights, history: [], trainSamples: 0, validationSamples: 0, stepsDone: 0 }
    : await trainTinyVla(built.set, config, {
        seed: o.seed,
        steps: o.steps,
        ...(o.batchSize === undefined ? {} : { batchSize: o.batchSize }),
        ...(o.learningRate === undefined ? {} : { learningRate: o.learningRate }),
        ...(o.finalLearningRate === undefined ? {} : { finalLearningRate: o.finalLearningRate }),
        ...(o.gripWeight === undefined ? {} : { gripWeight: o.gripWeight }),
        ...(o.auxWeight === undefined ? {} : { auxWeight: o.auxWeight }),
        ...(o.wordDropout === undefined ? {} : { wordDropout: o.wordDropout }),
        ...(o.shift === undefined ? {} : { shift: o.shift }),
        ...(o.stateNoise === undefined ? {} : { stateNoise: o.stateNoise }),
        ...(o.anchorNoise === undefined ? {} : { anchorNoise: o.anchorNoise }),
        ...(o.validation === undefined ? {} : { validation: o.validation }),
        ...(o.logEvery === undefined ? {} : { logEvery: o.logEvery }),
        ...(init ? { init } : {}),
        ...(grammar && goals && o.actorText !== "recorded"
          ? {
              phrase: phrasingIds(
                text,
                (i) => goals[episodeOf[i] as number] as GrammarGoal,
                grammar,
                novel,
              ),
            }
          : {}),
        onProgress: (s, n, l) => o.onStage?.("train", s, n, l),
        ...(o.signal ? { signal: o.signal } : {}),
      });
  let weights = result.weights;
  let stopped: TrainingStop | undefined =
    result.stepsDone < o.steps
      ? { stage: "actor", step: result.stepsDone, of: o.steps }
      : undefined;
  let locatorHistory: { step: number; loss: number }[] = [];
  let locator:
    | {
        steps: number;
        final_loss: number | null;
        samples: number;
        scenes?: number[];
        poison_weight?: number;
        fine_tuned?: boolean;
        refine_only?: boolean;
        refine_final_loss?: number | null;
      }
    | undefined;
  if (config.locator && o.locatorSteps === 0 && prev?.config.locator) {
    // The actor alone was fine-tuned; the locator's weights came over from the initial model.
    locator = { steps: 0, final_loss: null, samples: 0, fine_tuned: true };
  } else if (config.locator && !stopped) {
    // Second stage: the locator alone, on the first frame of every training scene (locator-data.ts).
    const steps = o.locatorSteps ?? 6000;
    const locatorSet = await buildLocatorSet(datasets, text, config, {
      ...(o.locatorScenes ? { scenes: o.locatorScenes } : {}),
      ...(o.poisonWeight ? { poisonRepeat: o.poisonWeight } : {}),
      onProgress: (d, t) => o.onStage?.("load", d, t),
    });
    // A fine-tune starts from the initial model's locator, at a fifth of the from-scratch rate.
    const fineTune = prev?.config.locator !== undefined;
    const common = {
      seed: o.locatorSeed ?? o.seed,
      steps,
      ...(grammar
        ? {
            phrase: phrasingIds(text, (i) => locatorSet.goals[i] as GrammarGoal, grammar, novel),
          }
        : {}),
      onProgress: (s: number, n: number, l: number) => o.onStage?.("locator", s, n, l),
      ...(o.signal ? { signal: o.signal } : {}),
    };
    const look = (from: Weights) =>
      trainSecondLook(locatorSet, config, from, {
        ...common,
        onRead: (d, t) => o.onStage?.("look", d, t),
      });
    // A second look learns only on inputs it sees standardised (train-refine.ts), which needs
    // the rest of the locator held. So a new one on a trained locator trains alone; otherwise
    // the locator trains first without it, then the second look on what it reads: from
    // scratch, from its seeded start; in a fine-tune, from no move again, since the one it had
    // corrected what the locator read before and holds its standardisation folded in.
    const lookAfter = config.locator.refine !== undefined && !(refineAlone && prev);
    const first =
      refineAlone && prev
        ? await look(weights)
        : await trainLocator(locatorSet, lookAfter ? withoutSecondLook(config) : config, weights, {
            ...common,
            learningRate: fineTune ? 1e-3 : 5e-3,
            ...(fineTune ? { fromWeights: true } : {}),
          });
    const restart = (w: Weights) =>
      completeWeights(
        config,
        withoutWeights(w, "locator.refine."),
        Rng.fromLabel("tiny-vla:refine"),
      );
    const second =
      lookAfter && first.stepsDone === steps
        ? await look(fineTune ? restart(first.weights) : first.weights)
        : undefined;
    const trained = second ?? first;
    weights = trained.weights;
    locatorHistory = first.history;
    if (first.stepsDone < steps) stopped = { stage: "locator", step: first.stepsDone, of: steps };
    else if (second && second.stepsDone < steps)
      stopped = { stage: "locator", step: second.stepsDone, of: steps };
    locator = {
      steps,
      final_loss: first.history[first.history.length - 1]?.loss ?? null,
      // From scratch with a second look: its own last loss (the position's squared error).
      ...(second
        ? { refine_final_loss: second.history[second.history.length - 1]?.loss ?? null }
        : {}),
      samples: locatorSet.count,
      // Only when asked for, so other manifests keep their bytes.
      ...(o.locatorScenes ? { scenes: [...o.locatorScenes] } : {}),
      ...(o.locatorSeed !== undefined && o.locatorSeed !== o.seed ? { seed: o.locatorSeed } : {}),
      ...(o.poisonWeight && o.poisonWeight !== 1 ? { poison_weight: o.poisonWeight } : {}),
      ...(fineTune ? { fine_tuned: true } : {}),
      ...(refineAlone && prev ? { refine_only: true } : {}),
    };
  }
  // Stopped before a single actor step: the weights are the initial ones, nothing to keep, and
  // writing them would only block the next run's --out.
  if (stopped?.stage === "actor" && stopped.step === 0) {
    throw new ProvaelError(
      "run/incomplete",
      "stopped before the first training step: nothing written",
      {
        details: { out: o.out },
        hint: "run the command again",
      },
    );
  }
  // The scenes these weights were trained on, declared in the manifest for `--policy-path`. A
  // fine-tune saw its initial model's too: one that declares none leaves this one undeclared.
  const seen = trainedScenes(datasets, locator && locator.steps > 0 ? o.locatorScenes : undefined);
  const prevScenes = prev ? declaredScenes(prev.manifest.training) : undefined;
  const scenes = prev ? (prevScenes ? unionScenes(prevScenes, seen) : undefined) : seen;
  const trainSeconds = (o.clock.monotonic() - t1) / 1000;
  o.onStage?.("save", 0, 1);
  const training = {
    seed: o.seed,
    steps: o.steps,
    batch_size: o.batchSize ?? TRAIN_DEFAULTS.batchSize,
    learning_rate: o.learningRate ?? TRAIN_DEFAULTS.learningRate,
    stride: o.stride ?? TRAIN_DEFAULTS.stride,
    shift: o.shift ?? TRAIN_DEFAULTS.shift,
    word_dropout: o.wordDropout ?? TRAIN_DEFAULTS.wordDropout,
    text_units: text.kind,
    // Absent when training read the recorded instructions, so those manifests keep their bytes.
    ...(grammar ? { grammar } : {}),
    // Only when the actor kept the recorded instructions, so other manifests keep their bytes.
    ...(o.actorText === "recorded" ? { actor_text: "recorded" } : {}),
    // Only when used, so other manifests keep their bytes.
    ...(novel.words > 0 ? { novel_words: novel.words } : {}),
    ...(novel.parts > 0 ? { novel_parts: novel.parts } : {}),
    ...(novel.distractor > 0 ? { novel_distractor: novel.distractor } : {}),
    ...(novel.colours > 0 ? { novel_colours: novel.colours } : {}),
    state_noise: o.stateNoise ?? TRAIN_DEFAULTS.stateNoise,
    anchor_noise: o.anchorNoise ?? TRAIN_DEFAULTS.anchorNoise,
    datasets: o.data.map((d, i) => ({
      digest: datasetDigest(d),
      episodes: datasets[i]?.episodes.length ?? 0,
      frames: datasets[i]?.info.total_frames ?? 0,
      // Only for data with poisoned demonstrations, so other manifests keep their bytes.
      ...poisonedCount(datasets[i]),
    })),
    ...(scenes ? { scenes } : {}),
    samples: built.set.count,
    final_loss: result.history[result.history.length - 1]?.loss ?? null,
    ...(locator ? { locator } : {}),
    ...(prev ? { init_from: prev.digest } : {}),
    // Only for an interrupted training: these weights are not what the recipe gives.
    ...(stopped ? { stopped } : {}),
  };
  const digest = saveWeights(o.out, { config, text, weights, training });
  const lossCurve = join(o.out, "loss-curve.svg");
  writeFileSync(
    lossCurve,
    await lossCurveSvg(
      keepActor ? locatorHistory : result.history,
      keepActor
        ? {
            title: `tiny-vla locator fine-tune, seed ${o.locatorSeed ?? o.seed}: ${locator?.steps} steps, ${locator?.samples} samples`,
          }
        : { title: `tiny-vla seed ${o.seed}: ${o.steps} steps, ${built.set.count} samples` },
    ),
  );
  const log = join(o.out, "training-log.json");
  writeFileSync(
    log,
    `${JSON.stringify(
      {
        model: "tiny-vla",
        digest,
        parameters: parameterCount(config),
        ...training,
        train_samples: result.trainSamples,
        validation_samples: result.validationSamples,
        instructions: built.instructions,
        seconds: { load: loadSeconds, train: trainSeconds },
        history: result.history,
      },
      null,
      2,
    )}\n`,
  );
  return {
    digest,
    parameters: parameterCount(config),
    seconds: trainSeconds,
    samples: built.set.count,
    history: result.history,
    ...(locator
      ? {
          locator: {
            steps: locator.steps,
            samples: locator.samples,
            final_loss: locator.final_loss,
          },
        }
      : {}),
    files: {
      weights: join(o.out, "weights.bin"),
      manifest: join(o.out, "manifest.json"),
      lossCurve,
      log,
    },
    ...(stopped ? { stopped } : {}),
  };
}

/** `weights` less those whose names begin with `prefix`. */
function withoutWeights(weights: Weights, prefix: string): Weights {
  return new Map([...weights].filter(([name]) => !name.startsWith(prefix)));
}

/** `cfg` without its locator's second look (its locator as trained before the second look is). */
function withoutSecondLook(cfg: TinyVlaConfig): TinyVlaConfig {
  if (!cfg.locator) return cfg;
  const { refine: _, ...locator } = cfg.locator;
  return { ...cfg, locator };
}
