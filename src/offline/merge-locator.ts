/**
 * Joins the actor of one tiny-vla training with the locator of another made from the same data
 * and recipe, so the two stages can train in two processes at once (the WASM backend uses one
 * core each). A locator trained from scratch starts from its own seeded initialisation, draws
 * from its own seed alone (`--locator-seed`, else the run's) and never reads the actor's weights
 * (`trainLocator`), so the joined weights are the bytes one training of both stages writes with
 * the actor's seed and the locator's: several actor seeds can share one locator and the other
 * way round (src/offline/train-tiny-vla.test.ts holds that to account).
 */
import { isDeepStrictEqual } from "node:util";
import type { Digest } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import type { TinyVlaConfig } from "../policies/tiny-vla/model.js";
import { declaredScenes, loadWeights } from "../policies/tiny-vla/weights.js";
import { saveWeights } from "../policies/tiny-vla/weights-files.js";
import { unionScenes } from "./trained-scenes.js";

/**
 * Options of the locator alone: the actor's stage neither reads nor trains what they change (its
 * weights are initialised name by name, and it learns on true anchors), so an actor joins a
 * locator that differs in them, and the join's configuration takes the locator's.
 */
const LOCATOR_ONLY = ["map"] as const;

/** A configuration without its locator-only options. */
function actorPart(config: TinyVlaConfig): TinyVlaConfig {
  if (!config.locator) return config;
  const locator = { ...config.locator };
  for (const k of LOCATOR_ONLY) delete locator[k];
  return { ...config, locator };
}

/** The actor's configuration with the locator's locator-only options. */
function withLocatorOptions(actor: TinyVlaConfig, locator: TinyVlaConfig): TinyVlaConfig {
  const own = actorPart(actor);
  if (!own.locator || !locator.locator) return own;
  const options = Object.fromEntries(
    LOCATOR_ONLY.filter((k) => locator.locator?.[k] !== undefined).map((k) => [
      k,
      locator.locator?.[k],
    ]),
  );
  return { ...own, locator: { ...own.locator, ...options } };
}

/** The manifest's training fields that say what both stages were trained on and how. */
const RECIPE = [
  "datasets",
  "stride",
  "text_units",
  "grammar",
  "novel_words",
  "novel_parts",
  "novel_distractor",
  "novel_colours",
] as const;

export function mergeLocator(actorDir: string, locatorDir: string, out: string): Digest {
  const a = loadWeights(actorDir);
  const b = loadWeights(locatorDir);
  const refuse = (why: string, hint: string) => {
    throw new ProvaelError("config/invalid", why, { details: { actorDir, locatorDir }, hint });
  };
  const same = "train both from the same data with the same options";
  if (!a.config.locator) refuse(`${actorDir} has no locator`, same);
  if (!isDeepStrictEqual(actorPart(a.config), actorPart(b.config)))
    refuse("the two models' configurations differ", same);
  if (!isDeepStrictEqual(a.text.toJson(), b.text.toJson()))
    refuse("the two models read text with different units", same);
  // What the two stages read must be the same too, or OUT would be neither training's result.
  const differ = RECIPE.filter(
    (k) => !isDeepStrictEqual(a.manifest.training[k], b.manifest.training[k]),
  );
  if (differ.length > 0) refuse(`the two trainings' recipes differ in ${differ.join(", ")}`, same);
  const locator = b.manifest.training.locator as
    | { fine_tuned?: boolean; seed?: number }
    | undefined;
  // A fine-tuned locator started from its own run's actor stage, so it is not independent.
  if (!locator || locator.fine_tuned || b.manifest.training.stopped)
    refuse(
      `${locatorDir}'s locator was not trained from scratch to the end`,
      "train the locator without --init and let it finish",
    );
  const weights = new Map(a.weights);
  for (const [name, data] of b.weights) if (name.startsWith("locator.")) weights.set(name, data);
  return saveWeights(out, {
    config: withLocatorOptions(a.config, b.config),
    text: a.text,
    weights,
    training: {
      ...withScenes(a.manifest.training, b.manifest.training),
      locator: withSeed(
        locator as { seed?: number },
        a.manifest.training.seed,
        b.manifest.training.seed,
      ),
      merged: { actor: a.digest, locator: b.digest },
    },
  });
}

/**
 * The actor's training fields with the scenes both halves saw: the locator's range may be wider
 * than the actor's data. Undeclared where either half declares none.
 */
function withScenes(
  actor: Record<string, unknown>,
  locator: Record<string, unknown>,
): Record<string, unknown> {
  const { scenes: _scenes, ...rest } = actor;
  const a = declaredScenes(actor);
  const b = declaredScenes(locator);
  return a && b ? { ...rest, scenes: unionScenes(a, b) } : rest;
}

/**
 * The locator's record as one training with the actor's seed writes it: its own seed named only
 * where it differs from the actor's (`--locator-seed`), as train-tiny-vla.ts records it.
 */
function withSeed(
  locator: { seed?: number },
  actorSeed: unknown,
  locatorRunSeed: unknown,
): Record<string, unknown> {
  const { seed: named, ...rest } = locator;
  const seed = named ?? locatorRunSeed;
  return seed === actorSeed ? rest : { ...rest, seed };
}
