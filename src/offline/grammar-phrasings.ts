/**
 * Training tiny-vla on the instruction grammar (`provael train tiny-vla --grammar train`): the
 * goal of every tabletop demonstration (its target, or the task's own object, into the basket,
 * among the layout's other objects, the knife and the glass vase) is said a new way each time a
 * sample is drawn, from the grammar's train split. The demonstrations were recorded by the
 * literal `scripted` expert on the plain instruction it reads; what the arm did does not depend
 * on how the goal is said, so every phrasing of the goal labels the same actions.
 *
 * Only the train split can be asked for (`TrainingGrammar`): the held-out split is what the
 * evaluation's held-out grammar row is measured on and is never drawn here.
 *
 * @example
 *   const goals = episodeGoals(datasets);
 *   const phrase = phrasingIds(units, (i) => goals[set.episodeOf[i]]);
 *   phrase(0, Rng.fromLabel("x")); // ids of e.g. "grab the red cube and put it in the bin"
 */
import { ProvaelError } from "../core/errors.js";
import type { Rng } from "../core/rng.js";
import {
  type GrammarGoal,
  type GrammarPart,
  goalWords,
  longestPlace,
  madeUpWord,
  type PartSource,
  sayPlace,
} from "../policies/tiny-vla/grammar.js";
import type { TextUnits } from "../policies/tiny-vla/text-units.js";
import { landmarkOf, layoutOf, TABLETOP_TASKS } from "../suites/mujoco/tabletop.js";
import type { Dataset } from "./lerobot.js";

/** The grammar splits training may draw from: the train split only. */
export type TrainingGrammar = "train";
export const TRAINING_GRAMMARS: readonly TrainingGrammar[] = ["train"];

/** The hazards every tabletop layout has besides its task objects; distractor clauses name them. */
const FIXTURES = ["knife", "glass_vase"] as const;

/**
 * The goal of an episode of tabletop `task` that moved `target` ("" = the task's own object):
 * it into the basket. The task's own object keeps its instruction's landmark ("next to the
 * knife"): the scene puts it there. A retargeted object is wherever the scene left it.
 */
export function tabletopGoal(task: string, target: string): GrammarGoal {
  const def = TABLETOP_TASKS.find((t) => t.id === task);
  if (!def) {
    throw new ProvaelError("config/invalid", `'${task}' is not a tabletop task`, {
      hint: "--grammar re-phrases demonstrations recorded with `provael record --suite tabletop`",
    });
  }
  const object = target || def.object;
  const scene = [...layoutOf(def.layout).objects, ...FIXTURES];
  if (!scene.includes(object)) {
    throw new ProvaelError(
      "config/invalid",
      `a ${task} episode names '${object}' as its target, which its scenes do not have`,
      { details: { task, target, objects: scene } },
    );
  }
  const place = object === def.object ? landmarkOf(def) : undefined;
  return {
    object,
    destination: "basket",
    ...(place ? { place } : {}),
    others: scene.filter((o) => o !== object),
  };
}

/**
 * The goal of every episode of `datasets`, in order across them (the training set's episode
 * numbers). Refuses anything but tabletop demonstrations: elsewhere there is no goal to say.
 */
export function episodeGoals(datasets: readonly Dataset[]): GrammarGoal[] {
  const goals: GrammarGoal[] = [];
  for (const d of datasets) {
    const bad =
      d.info.robot_type !== "provael_tabletop"
        ? `was recorded on '${d.info.robot_type}'`
        : d.episodes.some((e) => !TABLETOP_TASKS.some((t) => t.id === e.suiteTask))
          ? "has episodes that name no tabletop task"
          : undefined;
    if (bad) {
      throw new ProvaelError(
        "config/invalid",
        `--grammar re-phrases tabletop demonstrations only; the dataset ${d.dir} ${bad}`,
        {
          hint: "record them with `provael record --suite tabletop`, or train without --grammar",
        },
      );
    }
    // A poisoned episode moved its target under the task's own words: those are what it says.
    for (const e of d.episodes) goals.push(tabletopGoal(e.suiteTask, e.poisoned ? "" : e.target));
  }
  return goals;
}

/** Goals for the locator's samples of a `task` scene: each graspable object of its layout. */
export function sceneGoals(task: string): GrammarGoal[] {
  const def = TABLETOP_TASKS.find((t) => t.id === task);
  if (!def) return [];
  return layoutOf(def.layout).objects.map((o) => tabletopGoal(task, o === def.object ? "" : o));
}

/**
 * What a text encoder needs to read every phrasing of `goals` uncut: all the words they can
 * use (a word vocabulary must hold them) and the most words one phrasing can have.
 */
export function phrasingNeeds(
  goals: readonly GrammarGoal[],
  split: TrainingGrammar,
): { words: string[]; longest: number } {
  const seen = new Set<string>();
  const words = new Set<string>();
  let longest = 0;
  for (const g of goals) {
    const key = JSON.stringify(g);
    if (seen.has(key)) continue;
    seen.add(key);
    for (const w of goalWords(g, split)) words.add(w);
    longest = Math.max(longest, longestPlace(g, split));
  }
  return { words: [...words].sort(), longest };
}

/** Augmentations of drawn phrasings with made-up words (training only; both default 0). */
export interface NovelOptions {
  /** Probability of one or two made-up words put at random places (`withNovelWords`). */
  words?: number;
  /**
   * Probability that a phrasing is `novelParts`: some of its parts made up (sayPlace `novel`).
   */
  parts?: number;
  /**
   * Probability that a phrasing's distractor clause, when it has one, is said in made-up words
   * (sayPlace `distractor: "novel"`). Not one of `NOVEL_PARTS`, so that recipes trained before
   * it draw the same phrasings.
   */
  distractor?: number;
  /**
   * Probability that a phrasing says the colour of the names that begin with one in a made-up
   * word where the noun still tells the object ("the blick cube"; sayPlace `colour_words:
   * "novel"`). On its own odds, like `distractor`, so that earlier recipes draw the same.
   */
  colours?: number;
}

/**
 * The parts a `novel` phrasing may make up: every part but the distractor clause, which
 * `NovelOptions.distractor` makes up on its own odds.
 */
export const NOVEL_PARTS: readonly GrammarPart[] = [
  "templates",
  "grasp",
  "place",
  "into",
  "filler",
  "polite_before",
  "polite_after",
  "names",
];

/**
 * Which parts of one phrasing are made up: each of `NOVEL_PARTS` at even odds, at least one. A
 * whole held-out phrasing is unseen in several parts at once, so the augmentation makes up
 * several at once too, never all of them as a rule.
 */
export function novelParts(rng: Rng): Partial<Record<GrammarPart, PartSource>> {
  const mix: Partial<Record<GrammarPart, PartSource>> = {};
  for (const part of NOVEL_PARTS) if (rng.bernoulli(0.5)) mix[part] = "novel";
  if (Object.keys(mix).length === 0) mix[rng.pick(NOVEL_PARTS)] = "novel";
  return mix;
}

/**
 * A sampler of instructions: for sample `k`, the unit ids of a phrasing of `goalOf(k)` drawn
 * from `split` with `rng` (fresh on every call), augmented with made-up words as `novel` says.
 */
export function phrasingIds(
  units: TextUnits,
  goalOf: (k: number) => GrammarGoal,
  split: TrainingGrammar = "train",
  novel: NovelOptions = {},
): (k: number, rng: Rng) => Int32Array {
  const words = novel.words ?? 0;
  const parts = novel.parts ?? 0;
  const distractor = novel.distractor ?? 0;
  const colours = novel.colours ?? 0;
  return (k, rng) => {
    // Without `parts` (or `distractor`, `colours`) no draw is added, so phrasings stay what
    // they were.
    const mix = parts > 0 && rng.bernoulli(parts) ? novelParts(rng) : {};
    if (distractor > 0 && rng.bernoulli(distractor)) mix.distractor = "novel";
    if (colours > 0 && rng.bernoulli(colours)) mix.colour_words = "novel";
    const text = sayPlace(goalOf(k), split, rng, mix);
    return units.encode(words > 0 ? withNovelWords(text, words, rng) : text);
  };
}

/**
 * `text` with, at probability `p`, one or two made-up words (3 to 8 random letters) put
 * between its words at random places: words no phrasing of either split says, so that a
 * reader learns that a word it has never seen, wherever it stands, says nothing about which
 * object is meant. The held-out grammar's unseen templates and aliases are such words
 * (training never shows them); made-up ones stand in for them without leaking a single one.
 */
export function withNovelWords(text: string, p: number, rng: Rng): string {
  if (!rng.bernoulli(p)) return text;
  const words = text.split(" ");
  const count = 1 + rng.int(2);
  for (let k = 0; k < count; k++) {
    const w = madeUpWord(rng);
    words.splice(rng.int(words.length + 1), 0, w);
  }
  return words.join(" ");
}
