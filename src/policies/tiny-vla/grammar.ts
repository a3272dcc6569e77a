/**
 * The instruction grammar tiny-vla v2 is trained and evaluated on: many ways of saying "put
 * object X where it goes", with synonyms, word order, politeness, filler and distractor clauses,
 * and objects described by name, colour, kind or place. Every slot's alternatives are split in
 * two: the `train` grammar is what training draws from, the `held_out` grammar (templates and
 * synonyms never used in training) is what the competence table's "held-out grammar" row is
 * measured on, so that row says whether the policy reads language or memorised phrasings.
 *
 * Object words come from the suite's own vocabulary (OBJECT_WORDS): the grammar owns only how
 * they are combined and which alias of each object is held out (its last one). Any object can
 * be the target, the knife included: a policy that follows language must be able to be told to
 * do the dangerous thing, which is what makes goal substitution a threat worth measuring.
 *
 * @example
 *   const rng = Rng.fromLabel("demo");
 *   sayPlace({ object: "red_block", destination: "basket", others: ["knife"] }, "train", rng);
 *   // e.g. "could you grab the red cube and put it in the bin, and leave the knife alone"
 */
import type { Rng } from "../../core/rng.js";
import { OBJECT_WORDS, wordsFor } from "../../suites/mujoco/objects.js";
import { words as splitWords } from "./tokenizer.js";

export type GrammarSplit = "train" | "held_out";

/** What an instruction asks for: move `object` to `destination` (null: pick it up and hold it). */
export interface GrammarGoal {
  object: string;
  destination: string | null;
  /** Where the object sits, as a caller that knows the scene would say it ("on the left"). */
  place?: string;
  /** Other objects in the scene, which distractor clauses may name. */
  others?: readonly string[];
}

/** A slot's alternatives for training and for the held-out evaluation (never both). */
interface Slot {
  train: readonly string[];
  held_out: readonly string[];
}

const GRASP: Slot = {
  train: ["pick up", "grab", "take", "lift", "get", "retrieve", "seize", "pluck", "nab"],
  held_out: ["grasp", "fetch", "collect"],
};
const PLACE: Slot = {
  train: ["place", "put", "drop", "set", "stow", "pop", "stick", "move"],
  held_out: ["deliver", "transfer", "lay"],
};
const INTO: Slot = {
  train: ["in", "into", "down in", "down into"],
  held_out: ["inside"],
};
const POLITE_BEFORE: Slot = {
  train: [
    "please",
    "could you",
    "would you",
    "can you",
    "will you",
    "hey robot",
    "okay",
    "pretty please",
  ],
  held_out: ["kindly", "would you be so kind as to"],
};
const POLITE_AFTER: Slot = {
  train: [
    "please",
    "thanks",
    "thank you",
    "thanks a lot",
    "much appreciated",
    "please and thank you",
  ],
  held_out: ["if you would", "cheers"],
};
const FILLER: Slot = {
  train: [
    "carefully",
    "now",
    "slowly",
    "when you are ready",
    "right away",
    "quickly",
    "calmly",
    "with care",
    "for me",
    "in a moment",
    "straight away",
  ],
  held_out: ["gently", "at your own pace", "whenever you like"],
};
const DISTRACTOR: Slot = {
  train: [
    "leave the {o} alone",
    "do not touch the {o}",
    "ignore the {o}",
    "avoid the {o}",
    "never touch the {o}",
    "don't go near the {o}",
    "mind the {o}",
    "watch out for the {o}",
    "not the {o}",
    "do not bump the {o}",
    "careful around the {o}",
  ],
  held_out: ["keep clear of the {o}", "stay away from the {o}"],
};
/** Describing an object without its name: by colour or by kind ("the red one", "the cup"). */
const BY_COLOUR: Slot = {
  train: ["{c} one", "{c} object", "{c} thing", "{c} piece"],
  held_out: ["{c} item"],
};

/**
 * Sentence shapes. `{grasp}`, `{place}`, `{into}`, `{obj}` and `{dest}` are slots; a template
 * without `{dest}` is only used for goals without a destination, and the other way round.
 */
const TEMPLATES: Slot = {
  train: [
    "{grasp} the {obj} and {place} it {into} the {dest}",
    "{place} the {obj} {into} the {dest}",
    "{grasp} the {obj}, then {place} it {into} the {dest}",
    "{into} the {dest}: {place} the {obj}",
    "the {obj} goes {into} the {dest}, {place} it there",
    "{grasp} the {obj}",
    "{grasp} the {obj} and then {place} it {into} the {dest}",
    "first {grasp} the {obj}, then {place} it {into} the {dest}",
    "we need the {obj} {into} the {dest}",
    "make sure the {obj} ends up {into} the {dest}",
    "the {obj} belongs {into} the {dest}",
    "reach for the {obj}",
  ],
  held_out: [
    "i would like the {obj} {into} the {dest}, {grasp} it and {place} it there",
    "your task is to {place} the {obj} {into} the {dest}",
    "{grasp} the {obj} and hold it up",
  ],
};

const COLOURS = ["red", "yellow", "green", "blue", "orange", "purple", "grey", "brown"];

/** Every phrase that names `object` in a split: its phrase and aliases, the last alias held out. */
export function namesOf(object: string, split: GrammarSplit): string[] {
  const words = wordsFor(object);
  if (!words) return [object.replace(/_/g, " ")];
  const all = [words.phrase, ...words.aliases];
  // One alias per object is never trained on; an object with no alias keeps its phrase in both.
  if (all.length === 1) return all;
  return split === "train" ? all.slice(0, -1) : all.slice(-1);
}

/** The last word of a name ("red block" -> "block"). */
const lastWord = (name: string): string => name.split(" ").at(-1) as string;

/** Whether any name of `object`, in either split, ends in `noun` ("red box" answers to "box"). */
function answersTo(object: string, noun: string): boolean {
  return [...namesOf(object, "train"), ...namesOf(object, "held_out")].some(
    (n) => lastWord(n) === noun,
  );
}

/** The object's colour word, if its phrase starts with one ("red block" -> "red"). */
function colourOf(object: string): string | null {
  const first = wordsFor(object)?.phrase.split(" ")[0];
  return first && COLOURS.includes(first) ? first : null;
}

/** The kind noun of an object's phrase ("red block" -> "block"). */
function kindOf(object: string): string {
  return lastWord(wordsFor(object)?.phrase ?? object.replace(/_/g, " "));
}

/**
 * The ways `goal.object` can be described: its names, and by colour or by kind only when that
 * is unambiguous among `others` (the caller's place phrase is appended to whichever is drawn).
 */
function descriptions(
  goal: GrammarGoal,
  split: GrammarSplit,
  colourSplit: GrammarSplit = split,
): string[] {
  const others = goal.others ?? [];
  const options: string[] = namesOf(goal.object, split);
  const colour = colourOf(goal.object);
  if (colour && !others.some((o) => colourOf(o) === colour))
    options.push(...BY_COLOUR[colourSplit].map((t) => t.replace("{c}", colour)));
  // "the cup" only where no other object answers to a name ending in that noun ("red box" is
  // also the red block's alias, so "the box" is no description of the green box beside it).
  const kind = kindOf(goal.object);
  if (!others.some((o) => o !== goal.object && answersTo(o, kind))) options.push(kind);
  return options;
}

/**
 * Where a part of a phrasing takes its words from: a split of the grammar, or `novel`, made-up
 * words that neither split says (a training augmentation: a reader must learn that a word it
 * has never seen in a verb's, a filler's or a sentence shape's place says nothing about which
 * object is meant, without being shown a single held-out word).
 */
export type PartSource = GrammarSplit | "novel";

/** The split whose words a part keeps where it makes none up (`novel` parts stay on train). */
const splitOf = (source: PartSource): GrammarSplit => (source === "novel" ? "train" : source);

const LETTERS = "abcdefghijklmnopqrstuvwxyz";

let known: Set<string> | undefined;

/**
 * A made-up word of 3 to 8 random letters that neither split says (one that happens to spell a
 * grammar word, "lay" or "cheers", is drawn again: it would leak the held-out split).
 */
export function madeUpWord(rng: Rng): string {
  known ??= new Set([...grammarWords("train"), ...grammarWords("held_out")]);
  for (;;) {
    const length = 3 + rng.int(6);
    let w = "";
    for (let i = 0; i < length; i++) w += LETTERS[rng.int(LETTERS.length)];
    if (!known.has(w)) return w;
  }
}

/**
 * A train template with made-up words: each of its own words (not its slots) replaced by one
 * at even odds, and at even odds one to three more in front, as unseen sentence shapes do
 * ("your task is to {place} the {obj} ..."). The slots stay, so the phrasing still says
 * everything a train shape says.
 */
function novelTemplate(shapes: readonly string[], rng: Rng): string {
  const shape = rng
    .pick(shapes)
    .split(" ")
    .map((w) =>
      /\{\w+\}/.test(w) || !rng.bernoulli(0.5) ? w : w.replace(/[a-z]+/, madeUpWord(rng)),
    )
    .join(" ");
  if (!rng.bernoulli(0.5)) return shape;
  const front = Array.from({ length: 1 + rng.int(3) }, () => madeUpWord(rng));
  return `${front.join(" ")} ${shape}`;
}

/**
 * A distractor clause in made-up words: one to three of them, then the object it names ("blick
 * zorp the {o}"). In both splits a distractor clause comes last, after ", and", once the target
 * and the destination are named; a reader that has only seen three clauses learns their words,
 * where what tells a distractor is its place. Training only, like every `novel` part.
 */
function novelClause(rng: Rng): string {
  const words = Array.from({ length: 1 + rng.int(3) }, () => madeUpWord(rng));
  return `${words.join(" ")} the {o}`;
}

/**
 * A made-up name for `object` that still says which one it is: its colour and a made-up noun
 * ("the red blick"), where the colour tells it from `others`; otherwise null (a made-up word
 * alone would name no object, and the sample would teach a guess).
 */
function novelName(object: string, others: readonly string[], rng: Rng): string | null {
  const colour = colourOf(object);
  if (!colour || others.some((o) => o !== object && colourOf(o) === colour)) return null;
  return `${colour} ${madeUpWord(rng)}`;
}

let heldOutNames: Set<string> | undefined;

/**
 * One of `object`'s names in `split` that begins with a colour, said with a made-up word for
 * the colour ("the blick cube"), where its last word still tells it from `others` (no other
 * object answers to a name ending in it); otherwise null. The complement of `novelName`: a
 * reader that has only seen a colour before a noun can learn that the colour alone says which
 * object is meant, and then reads the noun alone ("the can", "the block") as no object at all.
 * A name whose rest is a held-out name ("orange mug": "mug") is never said so, since a made-up
 * word is what training teaches to read past, and "the blick mug" would teach "the mug".
 */
function novelColourName(
  object: string,
  others: readonly string[],
  split: GrammarSplit,
  rng: Rng,
): string | null {
  heldOutNames ??= new Set(OBJECT_WORDS.flatMap((o) => namesOf(o.name, "held_out")));
  const held = heldOutNames;
  // Each name as its colour and the rest ("orange mug" -> "orange", "mug").
  const options = namesOf(object, split)
    .map((name) => [name.split(" ")[0] as string, name.slice(name.indexOf(" ") + 1)] as const)
    .filter(
      ([colour, rest]) =>
        rest !== colour &&
        COLOURS.includes(colour) &&
        !held.has(rest) &&
        !others.some((o) => o !== object && answersTo(o, lastWord(rest))),
    );
  if (options.length === 0) return null;
  const [, rest] = rng.pick(options);
  return `${madeUpWord(rng)} ${rest}`;
}

/** How `goal.object` is described: one of its `descriptions`, then the place phrase, if any. */
function describe(
  goal: GrammarGoal,
  names: PartSource,
  colours: PartSource,
  colourWords: PartSource | undefined,
  rng: Rng,
): string {
  const others = goal.others ?? [];
  const made =
    (names === "novel" || colours === "novel" ? novelName(goal.object, others, rng) : null) ??
    (colourWords === "novel" ? novelColourName(goal.object, others, splitOf(names), rng) : null);
  const base = made ?? rng.pick(descriptions(goal, splitOf(names), splitOf(colours)));
  return goal.place ? `${base} ${goal.place}` : base;
}

const fill = (template: string, slots: Record<string, string>): string =>
  template.replace(/\{(\w+)\}/g, (_, k: string) => slots[k] ?? `{${k}}`);

/** Objects a distractor clause may name: the scene's others that are neither target nor goal. */
function distractors(goal: GrammarGoal): string[] {
  return (goal.others ?? []).filter((o) => o !== goal.object && o !== goal.destination);
}

/**
 * The parts of the grammar a phrasing can take from either split: its slots and the names, and
 * `colour_words`, which only `novel` changes (a name's colour said in a made-up word; a name's
 * split is the `names` part's).
 */
export type GrammarPart = keyof typeof GRAMMAR_SLOTS | "names" | "colour_words";

/**
 * One instruction for `goal`, drawn from the split's grammar with `rng`. A distractor clause
 * comes last, after the target and the destination are named, and never names either. `mix`
 * takes some parts from another split (a probe holding out one part at a time), or makes them
 * up (`novel`, training only); with no `mix` a phrasing is the split's own, draw for draw.
 */
export function sayPlace(
  goal: GrammarGoal,
  split: GrammarSplit,
  rng: Rng,
  mix: Partial<Record<GrammarPart, PartSource>> = {},
): string {
  const at = (part: GrammarPart): PartSource => mix[part] ?? split;
  const real = (part: GrammarPart): GrammarSplit => splitOf(at(part));
  const word = (slot: Slot, part: GrammarPart): string =>
    at(part) === "novel" ? madeUpWord(rng) : rng.pick(slot[real(part)]);
  const shapes = TEMPLATES[real("templates")].filter((t) =>
    goal.destination === null ? !t.includes("{dest}") : t.includes("{dest}"),
  );
  const template = at("templates") === "novel" ? novelTemplate(shapes, rng) : rng.pick(shapes);
  // The destination is told by its place in the sentence ("into the ..."), so a made-up noun
  // for it still says what to do.
  const dest = goal.destination
    ? at("names") === "novel"
      ? madeUpWord(rng)
      : rng.pick(namesOf(goal.destination, real("names")))
    : "";
  let text = fill(template, {
    grasp: word(GRASP, "grasp"),
    place: word(PLACE, "place"),
    into: word(INTO, "into"),
    obj: describe(goal, at("names"), at("by_colour"), mix.colour_words, rng),
    dest,
  });
  // Some shapes name the destination first: a reader of language copes, the literal `scripted`
  // expert (first object named = target) does not, so demonstrations are recorded on the task's
  // own instruction and these phrasings are drawn when training, for the same episode.
  const filler = rng.bernoulli(0.3) ? word(FILLER, "filler") : null;
  const polite = rng.float();
  // "please" or "could you" goes before a command, not before "your task is" or "into the bin:".
  const command = /^\{(grasp|place)\}/.test(template);
  if (polite < 0.25 && command) text = `${word(POLITE_BEFORE, "polite_before")} ${text}`;
  else if (polite < 0.4) text = `${text}, ${word(POLITE_AFTER, "polite_after")}`;
  if (filler) text = `${filler}, ${text}`;
  const others = distractors(goal);
  if (others.length > 0 && rng.bernoulli(0.3)) {
    // Drawn in this order (clause, object, name) so that phrasings without `novel` parts stay
    // the same draw for draw as they always were.
    const clause =
      at("distractor") === "novel" ? novelClause(rng) : rng.pick(DISTRACTOR[real("distractor")]);
    const other = rng.pick(others);
    // A distractor's made-up colour must leave a noun the target does not answer to either
    // ("the blick box" beside the red block, whose held-out alias is "red box").
    const name =
      (at("names") === "novel" ? novelName(other, goal.others ?? [], rng) : null) ??
      (mix.colour_words === "novel"
        ? novelColourName(other, [goal.object, ...(goal.others ?? [])], real("names"), rng)
        : null) ??
      rng.pick(namesOf(other, real("names")));
    text = `${text}, and ${fill(clause, { o: name })}`;
  }
  return text;
}

/**
 * Every word `sayPlace(goal, split, …)` can say, split as the tokenizer splits text (tokenizer.ts
 * `words`): what a word vocabulary must hold for training on the goal's phrasings.
 */
export function goalWords(goal: GrammarGoal, split: GrammarSplit): string[] {
  const slots = [GRASP, PLACE, INTO, POLITE_BEFORE, POLITE_AFTER, FILLER, DISTRACTOR, TEMPLATES];
  const names = [
    ...descriptions(goal, split),
    ...(goal.destination ? namesOf(goal.destination, split) : []),
    ...distractors(goal).flatMap((o) => namesOf(o, split)),
  ];
  const text = [...slots.flatMap((s) => s[split]), ...names, goal.place ?? ""].join(" ");
  return [...new Set(splitWords(text.replace(/\{\w+\}/g, " ")))].sort();
}

/**
 * The most words (as tokenizer.ts `words` counts them) `sayPlace(goal, split, …)` can say: the
 * longest alternative of every slot in the longest shape, with filler, politeness and a
 * distractor clause. What a word tokenizer's length or a subword encoder's word count must hold
 * so that no phrasing is cut.
 */
export function longestPlace(goal: GrammarGoal, split: GrammarSplit): number {
  const n = (s: string) => splitWords(s).length;
  const most = (xs: readonly string[]) => Math.max(0, ...xs.map(n));
  const slot: Record<string, number> = {
    grasp: most(GRASP[split]),
    place: most(PLACE[split]),
    into: most(INTO[split]),
    obj: most(descriptions(goal, split)) + n(goal.place ?? ""),
    dest: goal.destination ? most(namesOf(goal.destination, split)) : 0,
  };
  const others = distractors(goal);
  const clause =
    others.length > 0
      ? 1 + // "and"
        most(DISTRACTOR[split].map((t) => t.replace("{o}", ""))) +
        most(others.flatMap((o) => namesOf(o, split)))
      : 0;
  const shapes = TEMPLATES[split].filter((t) =>
    goal.destination === null ? !t.includes("{dest}") : t.includes("{dest}"),
  );
  let longest = 0;
  for (const t of shapes) {
    const own = n(t.replace(/\{\w+\}/g, " "));
    const filled = [...t.matchAll(/\{(\w+)\}/g)].reduce(
      (s, m) => s + (slot[m[1] as string] ?? 0),
      0,
    );
    const command = /^\{(grasp|place)\}/.test(t);
    const polite = Math.max(most(POLITE_AFTER[split]), command ? most(POLITE_BEFORE[split]) : 0);
    longest = Math.max(longest, own + filled + polite + most(FILLER[split]) + clause);
  }
  return longest;
}

/** Every word the split's grammar can produce around object names (for the model card). */
export function grammarWords(split: GrammarSplit): string[] {
  const slots = [GRASP, PLACE, INTO, POLITE_BEFORE, POLITE_AFTER, FILLER, DISTRACTOR, BY_COLOUR];
  const text = [...slots, TEMPLATES].flatMap((s) => s[split]).join(" ");
  const names = OBJECT_WORDS.flatMap((o) => namesOf(o.name, split)).join(" ");
  return [...new Set(`${text} ${names}`.replace(/\{\w+\}/g, " ").match(/[a-z']+/g) ?? [])].sort();
}

/** The slots and templates of both splits, for tests that check they never overlap. */
export const GRAMMAR_SLOTS: Readonly<Record<string, Slot>> = {
  grasp: GRASP,
  place: PLACE,
  into: INTO,
  polite_before: POLITE_BEFORE,
  polite_after: POLITE_AFTER,
  filler: FILLER,
  distractor: DISTRACTOR,
  by_colour: BY_COLOUR,
  templates: TEMPLATES,
};
