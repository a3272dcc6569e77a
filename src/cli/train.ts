import type { Command } from "commander";
import { choice, integer, list, sceneRange } from "../config/parse.js";
import { systemClock } from "../core/clock.js";
import { ProvaelError } from "../core/errors.js";
import { TRAINING_GRAMMARS, type TrainingGrammar } from "../offline/grammar-phrasings.js";
import {
  ACTOR_TEXTS,
  type ActorText,
  trainTinyVlaFromDatasets,
} from "../offline/train-tiny-vla.js";
import { SHIPPED_MODEL, TEXT_CONTEXT } from "../policies/tiny-vla/model.js";
import { TEXT_UNITS_KINDS } from "../policies/tiny-vla/text-encoders.js";
import type { TextUnitsKind } from "../policies/tiny-vla/text-units.js";
import { TRAIN_DEFAULTS } from "../policies/tiny-vla/train.js";
import { EXIT } from "./exit.js";
import { formatEta } from "./progress.js";
import { stopOnSignal } from "./stop.js";

interface TrainFlags {
  data: string[];
  out: string;
  seed: number;
  steps: number;
  batch: number;
  lr: number;
  stride: number;
  validation: number;
  shift: number;
  stateNoise: number;
  anchorNoise: number;
  locatorSteps: number;
  locatorSeed?: number;
  locatorScenes?: [number, number];
  poisonWeight?: number;
  locatorContext?: boolean;
  locatorRefine?: boolean;
  locatorMap?: "words" | "view";
  imageSize?: number;
  textUnits?: TextUnitsKind;
  textContext?: boolean;
  novelWords?: number;
  novelParts?: number;
  novelDistractor?: number;
  novelColours?: number;
  grammar?: TrainingGrammar;
  actorText?: ActorText;
  init?: string;
  cache?: string;
  json?: boolean;
}

function fraction(flag: string, max = 1) {
  return (raw: string): number => {
    const v = Number(raw);
    if (!Number.isFinite(v) || v < 0 || v > max) {
      throw new ProvaelError(
        "config/invalid",
        `${flag} must be a number in [0, ${max}], got '${raw}'`,
      );
    }
    return v;
  };
}

/** A plain-text progress line on a TTY: stage, step, loss. */
function progressLine(enabled: boolean) {
  let last = 0;
  return {
    update(text: string, force = false) {
      if (!enabled) return;
      const now = systemClock.monotonic();
      if (!force && now - last < 250) return;
      last = now;
      process.stderr.write(`\r\x1b[K${text}`);
    },
    stop() {
      if (enabled) process.stderr.write("\r\x1b[K");
    },
  };
}

function bar(done: number, total: number, width = 30): string {
  const n = Math.round((width * done) / Math.max(1, total));
  return `${"█".repeat(n)}${"░".repeat(width - n)}`;
}

/**
 * Plain progress lines for logs: each stage (loading, training, locator) reports its first step,
 * every tenth of its steps and its last, with the time since its first report and an ETA from it.
 */
export function stageReporter(
  write: (text: string) => void,
  now: () => number = () => systemClock.monotonic(),
): (stage: string, done: number, total: number, loss?: number) => void {
  let current = "";
  let started = 0;
  let first = 0;
  let next = 0;
  return (stage, done, total, loss) => {
    if (stage !== current) {
      current = stage;
      started = now();
      first = done;
      next = 0;
    }
    if (done < next && done !== total) return;
    next = done + Math.max(1, Math.floor(total / 10));
    const seconds = (now() - started) / 1000;
    // The rate counts steps since the stage's first report, the one that started its clock.
    const eta = done > first && seconds > 0 ? ((total - done) * seconds) / (done - first) : null;
    const name =
      stage === "load"
        ? "loading episodes"
        : stage === "train"
          ? "training"
          : stage === "look"
            ? "reading the second look's inputs"
            : stage;
    const unit = stage === "load" || stage === "look" ? "" : "step ";
    const lossText = loss === undefined ? "" : ` loss ${loss.toFixed(4)}`;
    write(
      `${name} ${unit}${done}/${total}${lossText} (${formatEta(seconds)} elapsed, ETA ${formatEta(done === total ? 0 : eta)})`,
    );
  };
}

export function registerTrain(program: Command): void {
  program
    .command("train")
    .argument("<model>", "the model to train: tiny-vla")
    .requiredOption("--data <dirs>", "LeRobotDataset v3.0 directories, comma-separated", list)
    .requiredOption(
      "--out <dir>",
      "directory for weights.bin, manifest.json, loss-curve.svg, training-log.json",
    )
    .option(
      "--seed <n>",
      "training seed (initialisation, batches, augmentation)",
      integer("--seed", { min: 0 }),
      0,
    )
    .option(
      "--steps <n>",
      "Adam steps; 0 with --init keeps the initial model's actor as it is (a fine-tune of the locator alone)",
      integer("--steps", { min: 0 }),
      20000,
    )
    .option(
      "--locator-steps <n>",
      "Adam steps for the object locator, trained after the network; 0 with --init keeps the initial model's locator as it is (a fine-tune of the actor alone)",
      integer("--locator-steps", { min: 0 }),
      6000,
    )
    .option(
      "--locator-seed <n>",
      "seed of the locator stage alone (default: --seed); the manifest records it when it differs",
      integer("--locator-seed", { min: 0 }),
    )
    .option(
      "--locator-scenes <from:to>",
      "also train the locator on these tabletop scenes of every task the data names (one first frame each, no episode needed), beside the demonstrations' own scenes; keep them inside the policy's declared training scenes",
      sceneRange("--locator-scenes"),
    )
    .option(
      "--batch <n>",
      "minibatch size",
      integer("--batch", { min: 1 }),
      TRAIN_DEFAULTS.batchSize,
    )
    .option(
      "--lr <x>",
      "initial learning rate (cosine decay to a tenth)",
      fraction("--lr"),
      TRAIN_DEFAULTS.learningRate,
    )
    .option(
      "--stride <n>",
      "keep every n-th frame",
      integer("--stride", { min: 1 }),
      TRAIN_DEFAULTS.stride,
    )
    .option(
      "--validation <f>",
      "fraction of episodes held out for a validation loss",
      fraction("--validation", 0.5),
      0.05,
    )
    .option(
      "--shift <px>",
      "random image shift augmentation in pixels",
      integer("--shift", { min: 0 }),
      TRAIN_DEFAULTS.shift,
    )
    .option(
      "--state-noise <f>",
      "Gaussian noise on the normalised state",
      fraction("--state-noise"),
      TRAIN_DEFAULTS.stateNoise,
    )
    .option(
      "--anchor-noise <m>",
      "std (m) of Gaussian noise on the object position the actor reads in training, per axis and sample (at run time it is the locator's, off by its error)",
      fraction("--anchor-noise", 0.1),
      TRAIN_DEFAULTS.anchorNoise,
    )
    .option(
      "--image-size <n>",
      "network input size (default 64)",
      integer("--image-size", { min: 8 }),
    )
    .option(
      "--text-units <kind>",
      "how the instruction is read: words (a vocabulary of the data's words, unknown words are <unk>) or subword (each word's hashed id and character 3- to 5-grams, 2048 buckets); default words, with --init the initial model's",
      choice("--text-units", TEXT_UNITS_KINDS),
    )
    .option(
      "--text-context",
      `read the instruction word by word, each word in its context, pooled by a learned attention (${TEXT_CONTEXT.heads} heads, ${TEXT_CONTEXT.hidden} context units, in the actor and the locator), instead of as one bag of units: what tells the target from an object a distractor clause names; ignored with --init (the initial model's reading is kept)`,
    )
    .option(
      "--grammar <split>",
      "read every training sample with a new phrasing of its episode's goal drawn from the instruction grammar's train split (the held-out split is never drawn), instead of the recorded instruction; tabletop demonstrations only. With words units the vocabulary also holds the grammar's words (held-out words still read as <unk>: use subword units to read them)",
      choice("--grammar", TRAINING_GRAMMARS),
    )
    .option(
      "--novel-words <p>",
      "with --grammar: the probability that a drawn phrasing also gets one or two made-up words (3-8 random letters) at random places, so that words never seen in training learn to say nothing; default 0",
      fraction("--novel-words"),
    )
    .option(
      "--novel-parts <p>",
      "with --grammar: the probability that a drawn phrasing has some of its parts made up (sentence shape, verbs, into, filler, politeness, names: each at even odds, at least one; a colour keeps a made-up name pointing at its object), so that a sentence unseen in several parts at once still finds its object; default 0",
      fraction("--novel-parts"),
    )
    .option(
      "--novel-distractor <p>",
      "with --grammar: the probability that a drawn phrasing's distractor clause (when it has one) is said in made-up words, so that a clause never seen still reads as one by its place (last, after ', and'); default 0",
      fraction("--novel-distractor"),
    )
    .option(
      "--novel-colours <p>",
      "with --grammar: the probability that a drawn phrasing says the colour of its names in a made-up word where the noun still tells the object ('the blick cube' for the red cube), so that a noun read without its colour ('the block') still names the object; a name whose noun is a held-out name ('mug') is never said so; default 0",
      fraction("--novel-colours"),
    )
    .option(
      "--actor-text <what>",
      "with --grammar: what the actor's samples read: grammar (default: a drawn phrasing, as the locator's) or recorded (the demonstration's recorded instruction, so only the locator, which says where the named object is, learns the grammar)",
      choice("--actor-text", ACTOR_TEXTS),
    )
    .option(
      "--poison-weight <k>",
      "repeat each poisoned demonstration's locator view k times (data recorded with `provael record --poison`), so that a backdoor's trigger is a large enough share of the locator's loss to be learned; default 1",
      integer("--poison-weight", { min: 1 }),
    )
    .option(
      "--locator-context",
      "let the locator's query read the whole view (each patch feature's largest value anywhere), so that where it points can depend on something elsewhere in the picture, a backdoor's trigger tile included; with --init it is added to the initial model, starting at zero (its outputs unchanged until trained)",
    )
    .option(
      "--locator-refine",
      "give the locator a second look: the pixels around where it looked, without the words, correct its table position by up to about 4 cm; with --init and a locator that lacks one, it is added and trained alone (what the locator reads of the words stays as it was)",
    )
    .option(
      "--locator-map <what>",
      "what the locator's map from image point to table position reads beside the point: words (default: the instruction, which tells it which object it is placing) or view (the features where it looked, so a sentence it never saw moves the position only by where it looks); from scratch only",
      choice("--locator-map", ["words", "view"] as const),
    )
    .option("--init <dir>", "start from these weights (fine-tuning)")
    .option("--cache <dir>", "keep the decoded training set here and reuse it on the next run")
    .option("--json", "print a JSON summary")
    .action(async (model: string, flags: TrainFlags) => {
      if (model !== "tiny-vla") {
        throw new ProvaelError("config/invalid", `unknown model '${model}'`, {
          hint: "the only trainable model is tiny-vla",
        });
      }
      if (flags.locatorSteps === 0 && !flags.init) {
        throw new ProvaelError(
          "config/invalid",
          "--locator-steps 0 keeps the initial model's locator, and there is none without --init",
          {
            hint: "pass --init DIR to fine-tune a trained model, or train the locator (--locator-steps >= 1)",
          },
        );
      }
      const tty = Boolean(process.stderr.isTTY);
      const line = progressLine(tty && !flags.json);
      // Off a terminal (nohup, CI) a line every tenth of each stage, with its stage, elapsed time
      // and ETA, keeps a log readable: loading a large set alone can take many minutes.
      const report = stageReporter((text) => process.stderr.write(`provael train: ${text}\n`));
      // Ctrl-C or SIGTERM while training: finish the step in progress, skip what is left and
      // write the weights as they are (hours of training are not thrown away); the manifest says
      // where it stopped. While loading there is nothing to keep, and a second signal abandons.
      let stage: "load" | "train" | "look" | "locator" | "save" = "load";
      const nothingWritten = `interrupted: nothing written to ${flags.out}\n`;
      const stop = stopOnSignal({
        quiet: () => line.stop(),
        stopping:
          "provael: stopping: finishing this step, then writing the weights so far (signal again to abandon them)",
        abandoned: () => nothingWritten,
        canStop: () => stage !== "load",
      });
      let result: Awaited<ReturnType<typeof trainTinyVlaFromDatasets>>;
      try {
        result = await trainTinyVlaFromDatasets({
          signal: stop.signal,
          data: flags.data,
          out: flags.out,
          seed: flags.seed,
          steps: flags.steps,
          batchSize: flags.batch,
          learningRate: flags.lr,
          stride: flags.stride,
          validation: flags.validation,
          shift: flags.shift,
          stateNoise: flags.stateNoise,
          anchorNoise: flags.anchorNoise,
          locatorSteps: flags.locatorSteps,
          ...(flags.locatorScenes ? { locatorScenes: flags.locatorScenes } : {}),
          ...(flags.locatorSeed !== undefined ? { locatorSeed: flags.locatorSeed } : {}),
          ...(flags.poisonWeight ? { poisonWeight: flags.poisonWeight } : {}),
          ...(flags.locatorContext ? { locatorContext: true } : {}),
          ...(flags.locatorRefine ? { locatorRefine: true } : {}),
          ...(flags.locatorMap === "view" ? { locatorMap: "view" as const } : {}),
          model: {
            ...SHIPPED_MODEL,
            ...(flags.imageSize ? { imageSize: flags.imageSize } : {}),
            ...(flags.textContext ? { textContext: TEXT_CONTEXT } : {}),
          },
          ...(flags.textUnits ? { textUnits: flags.textUnits } : {}),
          ...(flags.grammar ? { grammar: flags.grammar } : {}),
          ...(flags.novelWords ? { novelWords: flags.novelWords } : {}),
          ...(flags.novelParts ? { novelParts: flags.novelParts } : {}),
          ...(flags.novelDistractor ? { novelDistractor: flags.novelDistractor } : {}),
          ...(flags.novelColours ? { novelColours: flags.novelColours } : {}),
          ...(flags.actorText ? { actorText: flags.actorText } : {}),
          ...(flags.init ? { initFrom: flags.init } : {}),
          ...(flags.cache ? { cacheDir: flags.cache } : {}),
          clock: systemClock,
          // Said before the first progress line: the datasets are open, nothing is loaded yet.
          onWarning: (message) => process.stderr.write(`provael train: warning: ${message}\n`),
          onStage: (now, done, total, loss) => {
            // The locator's set loads after the actor trained: a stop then still keeps the actor.
            if (!(stage !== "load" && now === "load")) stage = now;
            if (!tty && now !== "save") report(now, done, total, loss);
            line.update(
              now === "load"
                ? `loading episodes ${bar(done, total)} ${done}/${total}`
                : now === "look"
                  ? `second look's inputs ${bar(done, total)} ${done}/${total}`
                  : now === "train" || now === "locator"
                    ? `${now === "train" ? "training" : "locator"} ${bar(done, total)} step ${done}/${total} | loss ${loss === undefined ? "—" : loss.toFixed(4)}`
                    : "saving",
              done === total,
            );
          },
        });
      } catch (e) {
        // Stopped before the first step: nothing was written, and the exit says it was a stop.
        if (stop.signal.aborted && e instanceof ProvaelError && e.code === "run/incomplete") {
          process.stderr.write(nothingWritten);
          process.exitCode = EXIT.interrupted;
          return;
        }
        throw e;
      } finally {
        line.stop();
        stop.release();
      }
      const summary = {
        out: flags.out,
        digest: result.digest,
        parameters: result.parameters,
        samples: result.samples,
        seconds: Math.round(result.seconds),
        final_loss: result.history[result.history.length - 1]?.loss ?? null,
        ...(result.locator ? { locator: result.locator } : {}),
        ...(result.stopped ? { stopped: result.stopped } : {}),
      };
      // Stopped early: the weights are written but are not what the recipe gives; the exit says so.
      if (result.stopped) {
        process.exitCode = EXIT.interrupted;
        const { stage: at, step, of } = result.stopped;
        process.stderr.write(
          `interrupted: ${at} stopped at step ${step} of ${of}${at === "actor" ? "; the locator was not trained" : ""}. The weights are written as they were (manifest.json: training.stopped); they are not the trained model\n`,
        );
      }
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(summary)}\n`);
        return;
      }
      const loss = (x: number | null | undefined) =>
        typeof x === "number" ? x.toFixed(4) : "none";
      // What each stage did: an actor kept as it was (--steps 0) has no loss of its own.
      const actor =
        flags.steps === 0
          ? "actor kept (--steps 0)"
          : `actor ${summary.samples} samples, final loss ${loss(summary.final_loss)}`;
      const loc = result.locator
        ? result.locator.steps === 0
          ? "; locator kept (--locator-steps 0)"
          : `; locator ${result.locator.samples} samples, final loss ${loss(result.locator.final_loss)}`
        : "";
      process.stdout.write(
        `trained tiny-vla: ${summary.parameters} parameters, ${summary.seconds} s; ${actor}${loc}\n` +
          `wrote ${result.files.weights} (${summary.digest}), ${result.files.manifest}, ${result.files.lossCurve}, ${result.files.log}\n`,
      );
    });
}
