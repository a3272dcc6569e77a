/**
 * How the `scripted` expert reads an instruction: the first object it names is the subject, the
 * verb before it says whether to pick it up, touch it or move the gripper to it, and the first
 * object named after a placing verb is where it goes. Words only, no simulator: the expert
 * (scripted.ts) acts on the goal this returns.
 */
import { OBJECT_WORDS } from "../suites/mujoco/objects.js";

export interface Mention {
  name: string;
  start: number;
  end: number;
}

export type ExpertMode = "pick" | "touch" | "reach" | "idle";

export interface ExpertGoal {
  mode: ExpertMode;
  /** The object acted on (a body name), or null when idle. */
  subject: string | null;
  /** Where a picked object goes, or null to lift and hold it. */
  destination: string | null;
}

const PICK_VERBS = [
  "pick",
  "grasp",
  "grab",
  "lift",
  "take",
  "get",
  "fetch",
  "hold",
  "carry",
  "bring",
  "place",
  "put",
  "move",
  "hand",
  "give",
  "remove",
  "collect",
];
const TOUCH_VERBS = [
  "touch",
  "push",
  "knock",
  "hit",
  "press",
  "tap",
  "poke",
  "smash",
  "strike",
  "nudge",
  "topple",
  "tip",
  "shove",
  "bump",
];
const REACH_VERBS = [
  "go",
  "reach",
  "approach",
  "head",
  "point",
  "hover",
  "visit",
  "navigate",
  "position",
  "travel",
];
const PLACE_VERBS = [
  "place",
  "put",
  "drop",
  "set",
  "deliver",
  "hand",
  "give",
  "bring",
  "move",
  "carry",
  "toss",
  "throw",
  "leave",
  "lay",
  "transfer",
];

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Phrases that name a body: its instruction phrase, aliases, and its name with spaces. */
export function phrasesFor(name: string): string[] {
  const words = OBJECT_WORDS.find((o) => o.name === name);
  const own = name.replace(/_/g, " ");
  return [...new Set([...(words ? [words.phrase, ...words.aliases] : []), own])];
}

/**
 * Mentions of known bodies in a text, in order, longest match first where two overlap
 * ("green box" wins over "box").
 */
export function findMentions(text: string, names: readonly string[]): Mention[] {
  const lower = text.toLowerCase();
  const all: Mention[] = [];
  for (const name of names) {
    for (const phrase of phrasesFor(name)) {
      const re = new RegExp(`\\b${escapeRegExp(phrase.toLowerCase())}\\b`, "g");
      for (let m = re.exec(lower); m !== null; m = re.exec(lower)) {
        all.push({ name, start: m.index, end: m.index + m[0].length });
      }
    }
  }
  all.sort((a, b) => b.end - b.start - (a.end - a.start) || a.start - b.start);
  const kept: Mention[] = [];
  for (const m of all) {
    if (!kept.some((k) => m.start < k.end && k.start < m.end)) kept.push(m);
  }
  return kept.sort((a, b) => a.start - b.start);
}

interface Word {
  word: string;
  start: number;
}

function wordsOf(text: string): Word[] {
  const out: Word[] = [];
  const re = /[a-z']+/g;
  const lower = text.toLowerCase();
  for (let m = re.exec(lower); m !== null; m = re.exec(lower))
    out.push({ word: m[0], start: m.index });
  return out;
}

/**
 * What a literal reader does with an instruction, given the bodies in the scene and which of
 * them can be grasped.
 *
 * @example
 *   parseInstruction("pick up the red block and place it in the basket", ["red_block", "basket"],
 *     (n) => n === "red_block"); // { mode: "pick", subject: "red_block", destination: "basket" }
 */
export function parseInstruction(
  text: string,
  names: readonly string[],
  graspable: (name: string) => boolean,
): ExpertGoal {
  const mentions = findMentions(text, names);
  const subject = mentions[0];
  if (!subject) return { mode: "idle", subject: null, destination: null };
  const words = wordsOf(text);
  if (!graspable(subject.name)) return { mode: "reach", subject: subject.name, destination: null };

  // The verb nearest before the subject decides what to do with it.
  let mode: ExpertMode = "pick";
  const before = words.filter((w) => w.start < subject.start);
  for (let i = before.length - 1; i >= 0; i--) {
    const w = before[i] as Word;
    const next = words[words.indexOf(w) + 1]?.word;
    if (TOUCH_VERBS.includes(w.word)) {
      mode = "touch";
      break;
    }
    if (
      REACH_VERBS.includes(w.word) ||
      (w.word === "move" && (next === "to" || next === "toward" || next === "towards"))
    ) {
      mode = "reach";
      break;
    }
    if (PICK_VERBS.includes(w.word)) break;
  }
  if (mode !== "pick") return { mode, subject: subject.name, destination: null };

  const verb = words.find((w) => w.start >= subject.end && PLACE_VERBS.includes(w.word));
  const destination = verb
    ? (mentions.find((m) => m.start > verb.start && m.name !== subject.name)?.name ?? null)
    : null;
  return { mode: "pick", subject: subject.name, destination };
}
