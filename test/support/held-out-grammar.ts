/**
 * Checks on instructions training reads: what of the held-out grammar an instruction contains
 * (words, templates, slot phrases and object names only the held-out split has), and whether it
 * names a goal's object outside its distractor clause.
 */
import {
  GRAMMAR_SLOTS,
  type GrammarGoal,
  grammarWords,
  namesOf,
} from "../../src/policies/tiny-vla/grammar.js";
import { words } from "../../src/policies/tiny-vla/tokenizer.js";
import { OBJECT_WORDS } from "../../src/suites/mujoco/objects.js";
import { landmarkOf, TABLETOP_TASKS } from "../../src/suites/mujoco/tabletop.js";

const literal = (s: string) => s.replace(/[.*+?^$()|[\]\\]/g, "\\$&");
/** A slot alternative or template as a pattern: its `{slot}`s match any words. */
const pattern = (t: string) => new RegExp(`\\b${literal(t).replace(/\{\w+\}/g, "[a-z' ]+?")}\\b`);

/** Words training can say: the train grammar's and the tasks' landmark phrases'. */
const TRAINED = new Set(
  words([...grammarWords("train"), ...TABLETOP_TASKS.map((d) => landmarkOf(d) ?? "")].join(" ")),
);
export const HELD_OUT_ONLY_WORDS = words(grammarWords("held_out").join(" ")).filter(
  (w) => !TRAINED.has(w),
);
const TEMPLATES = GRAMMAR_SLOTS.templates?.held_out.map(pattern) ?? [];
const PHRASES = Object.entries(GRAMMAR_SLOTS)
  .filter(([name]) => name !== "templates")
  .flatMap(([, slot]) => slot.held_out.map((alt) => ({ alt, re: pattern(alt) })));
const TRAIN_NAMES = OBJECT_WORDS.flatMap((o) => namesOf(o.name, "train")).sort(
  (a, b) => b.length - a.length,
);
const HELD_NAMES = OBJECT_WORDS.flatMap((o) => namesOf(o.name, "held_out")).filter(
  (n) => !TRAIN_NAMES.includes(n),
);

/** Everything of `text` only the held-out grammar says (empty: nothing). */
export function heldOutLeaks(text: string): string[] {
  const leaks = words(text).filter((w) => HELD_OUT_ONLY_WORDS.includes(w));
  for (const [k, re] of TEMPLATES.entries())
    if (re.test(text)) leaks.push(`template ${GRAMMAR_SLOTS.templates?.held_out[k]}`);
  for (const { alt, re } of PHRASES) if (re.test(text)) leaks.push(`phrase ${alt}`);
  // A held-out name can sit inside a trained one ("mug" in "orange mug"): take those out first.
  let rest = text;
  for (const n of TRAIN_NAMES) rest = rest.replace(new RegExp(`\\b${literal(n)}\\b`, "g"), "#");
  for (const n of HELD_NAMES)
    if (new RegExp(`\\b${literal(n)}\\b`).test(rest)) leaks.push(`name ${n}`);
  return leaks;
}

const clauses = (GRAMMAR_SLOTS.distractor?.train ?? [])
  .map((t) => literal(t).replace("{o}", ".+"))
  .join("|");
/** Whether `clause` is one of the train grammar's distractor clauses ("ignore the knife"). */
export const isTrainClause = (clause: string): boolean => new RegExp(`^(${clauses})$`).test(clause);
/** `text` without its train distractor clause at the end (", and ignore the knife"), if any. */
export const withoutTrainClause = (text: string): string =>
  text.replace(new RegExp(`, and (${clauses})$`), "");
const BY_COLOUR_NOUNS = (GRAMMAR_SLOTS.by_colour?.train ?? [])
  .map((t) => t.replace("{c} ", ""))
  .join("|");

/** Whether `text` names `goal.object` (by a train name, its colour or its kind) before any distractor clause. */
export function namesObject(text: string, goal: GrammarGoal): boolean {
  const main = withoutTrainClause(text);
  const phrase = OBJECT_WORDS.find((o) => o.name === goal.object)?.phrase ?? goal.object;
  const colour = phrase.split(" ")[0] as string;
  const kind = phrase.split(" ").at(-1) as string;
  return (
    namesOf(goal.object, "train").some((n) => new RegExp(`\\b${literal(n)}\\b`).test(main)) ||
    new RegExp(`\\b${colour} (${BY_COLOUR_NOUNS})\\b`).test(main) ||
    new RegExp(`\\bthe ${kind}\\b`).test(main)
  );
}
