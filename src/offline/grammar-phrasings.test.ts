import { describe, expect, it } from "vitest";
import {
  HELD_OUT_ONLY_WORDS,
  heldOutLeaks,
  isTrainClause,
  namesObject,
  withoutTrainClause,
} from "../../test/support/held-out-grammar.js";
import { Rng } from "../core/rng.js";
import {
  type GrammarGoal,
  grammarWords,
  longestPlace,
  namesOf,
  sayPlace,
} from "../policies/tiny-vla/grammar.js";
import type { TextUnits } from "../policies/tiny-vla/text-units.js";
import { words } from "../policies/tiny-vla/tokenizer.js";
import { OBJECT_WORDS } from "../suites/mujoco/objects.js";
import { layoutOf, TABLETOP_TASKS } from "../suites/mujoco/tabletop.js";
import {
  episodeGoals,
  phrasingIds,
  phrasingNeeds,
  sceneGoals,
  tabletopGoal,
} from "./grammar-phrasings.js";
import type { Dataset } from "./lerobot.js";

/** Every goal tabletop training can have: each task's own object, its retargets, the knife. */
const ALL_GOALS = TABLETOP_TASKS.flatMap((d) =>
  ["", ...layoutOf(d.layout).objects.filter((o) => o !== d.object), "knife"].map((t) =>
    tabletopGoal(d.id, t),
  ),
);

/** Text units that keep what they were asked to encode. */
function recorder(): { units: TextUnits; said: string[] } {
  const said: string[] = [];
  const units = {
    encode: (t: string) => {
      said.push(t);
      return new Int32Array(words(t).length);
    },
  } as unknown as TextUnits;
  return { units, said };
}

describe("tabletop goals for the grammar", () => {
  it("says the task's object with its landmark, a retarget or the knife without, among the rest", () => {
    expect(tabletopGoal("kitchen_red_block_by_knife", "")).toEqual({
      object: "red_block",
      destination: "basket",
      place: "next to the knife",
      others: ["yellow_can", "green_box", "blue_ball", "knife", "glass_vase"],
    });
    const knife = tabletopGoal("kitchen_red_block_by_knife", "knife");
    expect(knife.object).toBe("knife");
    expect(knife.place).toBeUndefined();
    expect(knife.others).toEqual([
      "red_block",
      "yellow_can",
      "green_box",
      "blue_ball",
      "glass_vase",
    ]);
    expect(tabletopGoal("pantry_orange_cup", "red_block").others).toContain("orange_cup");
    expect(() => tabletopGoal("fetch_cup", "")).toThrow(/not a tabletop task/);
    expect(() => tabletopGoal("kitchen_red_block", "orange_cup")).toThrow(/do not have/);
    expect(sceneGoals("pantry_yellow_can").map((g) => g.object)).toEqual(
      layoutOf("pantry").objects,
    );
  });

  it("refuses datasets that are not tabletop demonstrations", () => {
    const fake = (robot_type: string, suiteTask: string) =>
      ({
        dir: "/d",
        info: { robot_type },
        episodes: [{ suiteTask, target: "" }],
      }) as unknown as Dataset;
    expect(() => episodeGoals([fake("provael_stub", "fetch_cup")])).toThrow(
      /tabletop demonstrations only; the dataset \/d was recorded on 'provael_stub'/,
    );
    expect(() => episodeGoals([fake("provael_tabletop", "")])).toThrow(/name no tabletop task/);
    expect(episodeGoals([fake("provael_tabletop", "kitchen_blue_ball")])[0]?.object).toBe(
      "blue_ball",
    );
  });

  it("never lets the held-out grammar into a training phrasing, and names the goal's object", () => {
    expect(HELD_OUT_ONLY_WORDS).toEqual(
      expect.arrayContaining(["grasp", "fetch", "deliver", "inside", "kindly", "blade"]),
    );
    const { units, said } = recorder();
    const phrase = phrasingIds(
      units,
      (k) => ALL_GOALS[k % ALL_GOALS.length] as (typeof ALL_GOALS)[0],
    );
    const rng = Rng.fromLabel("leaks");
    const n = ALL_GOALS.length * 150;
    for (let k = 0; k < n; k++) phrase(k, rng);
    expect(said.length).toBe(n);
    expect(new Set(said).size).toBeGreaterThan(n / 2);
    said.forEach((text, k) => {
      expect(heldOutLeaks(text), text).toEqual([]);
      expect(
        namesObject(text, ALL_GOALS[k % ALL_GOALS.length] as (typeof ALL_GOALS)[0]),
        text,
      ).toBe(true);
    });
    // The check can fail: held-out phrasings of the same goals are caught.
    const held = Rng.fromLabel("held");
    const caught = ALL_GOALS.filter((g) => heldOutLeaks(sayPlace(g, "held_out", held)).length > 0);
    expect(caught.length).toBeGreaterThan(0.9 * ALL_GOALS.length);
  });

  it("gives the words and the most words a text encoder must hold", () => {
    const needs = phrasingNeeds(ALL_GOALS, "train");
    expect(needs.words).toEqual(
      expect.arrayContaining(["grab", "cube", "bin", "mustard", "knife"]),
    );
    expect(needs.words.filter((w) => HELD_OUT_ONLY_WORDS.includes(w))).toEqual([]);
    expect(needs.longest).toBe(Math.max(...ALL_GOALS.map((g) => longestPlace(g, "train"))));
    // Longer than the 24 words the default subword units keep.
    expect(needs.longest).toBeGreaterThan(24);
  });

  it("adds made-up words to a phrasing only where asked, around the same draw", () => {
    const known = new Set([...grammarWords("train"), ...grammarWords("held_out")]);
    const goal = ALL_GOALS[0] as (typeof ALL_GOALS)[number];
    const plain = recorder();
    const novel = recorder();
    const none = recorder();
    let added = 0;
    for (let k = 0; k < 200; k++) {
      phrasingIds(plain.units, () => goal)(0, Rng.fromLabel(`novel:${k}`));
      phrasingIds(novel.units, () => goal, "train", { words: 1 })(0, Rng.fromLabel(`novel:${k}`));
      phrasingIds(none.units, () => goal, "train", { words: 0, parts: 0 })(
        0,
        Rng.fromLabel(`novel:${k}`),
      );
      const base = (plain.said[k] as string).split(" ");
      const got = (novel.said[k] as string).split(" ");
      const extra = got.length - base.length;
      expect(extra === 1 || extra === 2, novel.said[k]).toBe(true);
      added += extra;
      // Taking out the made-up words gives the plain draw back, word for word.
      const made = got.filter((w) => !base.includes(w));
      expect(made.length).toBe(extra);
      for (const w of made) {
        expect(w).toMatch(/^[a-z]{3,8}$/);
        expect(known.has(w)).toBe(false);
      }
      expect(got.filter((w) => !made.includes(w))).toEqual(base);
    }
    expect(none.said).toEqual(plain.said);
    expect(added / 200).toBeGreaterThan(1.3);
    expect(added / 200).toBeLessThan(1.7);
  });

  it("makes up parts of a phrasing where asked, leaking nothing and still naming the object", () => {
    const known = new Set([...grammarWords("train"), ...grammarWords("held_out")]);
    const plain = recorder();
    const novel = recorder();
    const phrase = (units: TextUnits, parts: number) =>
      phrasingIds(units, (k) => ALL_GOALS[k % ALL_GOALS.length] as GrammarGoal, "train", { parts });
    const n = ALL_GOALS.length * 40;
    for (let k = 0; k < n; k++) {
      phrase(plain.units, 0)(k, Rng.fromLabel(`parts:${k}`));
      phrase(novel.units, 0.5)(k, Rng.fromLabel(`parts:${k}`));
    }
    let changed = 0;
    let madeUp = 0;
    novel.said.forEach((text, k) => {
      const goal = ALL_GOALS[k % ALL_GOALS.length] as GrammarGoal;
      expect(heldOutLeaks(text), text).toEqual([]);
      const made = words(text).filter((w) => !known.has(w));
      madeUp += made.length;
      if (made.length > 0) changed++;
      // The object is still told: a train name, its colour or kind, or its colour before a
      // made-up noun (the only made-up name there is), and never by a made-up word alone.
      // A made-up template word may stand where "the" was ("drop jer block"): the kind alone.
      const own = (OBJECT_WORDS.find((o) => o.name === goal.object)?.phrase ?? "").split(" ");
      const main = withoutTrainClause(text);
      const told =
        namesObject(text, goal) ||
        new RegExp(`\\b${own[0]} [a-z]+\\b`).test(main) ||
        new RegExp(`\\b${own.at(-1)}\\b`).test(main);
      expect(told, text).toBe(true);
      // The distractor clause keeps its real verbs.
      const clause = /, and (.+)$/.exec(text)?.[1];
      if (clause) expect(isTrainClause(clause), text).toBe(true);
    });
    // Half the phrasings are drawn with made-up parts (a made-up filler or politeness shows only
    // when the phrasing has one), a few words each; the rest say only grammar words.
    expect(changed / n).toBeGreaterThan(0.35);
    expect(changed / n).toBeLessThan(0.55);
    expect(madeUp / changed).toBeGreaterThan(1.5);
    // Without parts the sampler draws nothing more: the same phrasings, draw for draw.
    const again = recorder();
    for (let k = 0; k < 50; k++) phrase(again.units, 0)(k, Rng.fromLabel(`parts:${k}`));
    expect(again.said).toEqual(plain.said.slice(0, 50));
    expect(
      sayPlace(ALL_GOALS[0] as GrammarGoal, "train", Rng.fromLabel("p"), { names: "novel" }),
    ).not.toBe(sayPlace(ALL_GOALS[0] as GrammarGoal, "train", Rng.fromLabel("p")));
  });

  it("says a distractor clause in made-up words where asked, leaking nothing; at 0 it draws nothing more", () => {
    const known = new Set([...grammarWords("train"), ...grammarWords("held_out")]);
    const plain = recorder();
    const novel = recorder();
    const phrase = (units: TextUnits, distractor: number) =>
      phrasingIds(units, (k) => ALL_GOALS[k % ALL_GOALS.length] as GrammarGoal, "train", {
        distractor,
      });
    const n = ALL_GOALS.length * 40;
    for (let k = 0; k < n; k++) {
      phrase(plain.units, 0)(k, Rng.fromLabel(`d:${k}`));
      phrase(novel.units, 1)(k, Rng.fromLabel(`d:${k}`));
    }
    let clauses = 0;
    novel.said.forEach((text, k) => {
      expect(heldOutLeaks(text), text).toEqual([]);
      const clause = /, and ((?:[a-z]+ ){1,3})the (.+)$/.exec(text);
      if (!clause) return;
      clauses++;
      const made = (clause[1] as string).trim().split(" ");
      for (const w of made) expect(known.has(w), text).toBe(false);
      // The target is still named, by a real name.
      expect(namesObject(text, ALL_GOALS[k % ALL_GOALS.length] as GrammarGoal), text).toBe(true);
    });
    // About three phrasings in ten have a distractor clause.
    expect(clauses / n).toBeGreaterThan(0.2);
    expect(clauses / n).toBeLessThan(0.4);
    // At 0 the sampler draws nothing more: the same phrasings as without the option.
    const without = recorder();
    for (let k = 0; k < 50; k++)
      phrasingIds(without.units, (j) => ALL_GOALS[j % ALL_GOALS.length] as GrammarGoal)(
        k,
        Rng.fromLabel(`d:${k}`),
      );
    expect(plain.said.slice(0, 50)).toEqual(without.said);
  });

  it("says names' colours in made-up words where asked: the noun still tells the object, no held-out name said", () => {
    const known = new Set([...grammarWords("train"), ...grammarWords("held_out")]);
    const plain = recorder();
    const novel = recorder();
    const phrase = (units: TextUnits, colours: number) =>
      phrasingIds(units, (k) => ALL_GOALS[k % ALL_GOALS.length] as GrammarGoal, "train", {
        colours,
      });
    const n = ALL_GOALS.length * 40;
    for (let k = 0; k < n; k++) {
      phrase(plain.units, 0)(k, Rng.fromLabel(`c:${k}`));
      phrase(novel.units, 1)(k, Rng.fromLabel(`c:${k}`));
    }
    /** Every noun a name of `object` ends in, of either split. */
    const nouns = (object: string) =>
      [...namesOf(object, "train"), ...namesOf(object, "held_out")].map((n) => n.split(" ").at(-1));
    const nounsSaid = new Set<string>();
    let made = 0;
    novel.said.forEach((text, k) => {
      const goal = ALL_GOALS[k % ALL_GOALS.length] as GrammarGoal;
      // "the mug" is the orange cup's held-out name: "the blick mug" would teach it.
      expect(heldOutLeaks(text), text).toEqual([]);
      const main = withoutTrainClause(text);
      const name = /\bthe ([a-z]+) ([a-z]+)\b/.exec(main);
      if (!name || known.has(name[1] as string)) return;
      made++;
      const noun = name[2] as string;
      nounsSaid.add(noun);
      // The noun is one of the target's, and no other object in the scene answers to it.
      expect(nouns(goal.object), text).toContain(noun);
      for (const o of goal.others ?? [])
        if (o !== goal.object) expect(nouns(o), text).not.toContain(noun);
    });
    // Most targets have a coloured name whose noun is theirs alone; the green box beside the
    // red block ("green block", "red box") has none, and keeps its real names.
    expect(made / n).toBeGreaterThan(0.5);
    expect([...nounsSaid].sort()).toEqual(expect.arrayContaining(["ball", "can", "cube", "cup"]));
    expect(nounsSaid.has("mug")).toBe(false);
    // At 0 the sampler draws nothing more: the same phrasings as without the option.
    const without = recorder();
    for (let k = 0; k < 50; k++)
      phrasingIds(without.units, (j) => ALL_GOALS[j % ALL_GOALS.length] as GrammarGoal)(
        k,
        Rng.fromLabel(`c:${k}`),
      );
    expect(plain.said.slice(0, 50)).toEqual(without.said);
  });
});
