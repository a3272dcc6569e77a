#!/usr/bin/env node
/**
 * Where tiny-vla's locator puts the object an instruction names, for the instruction grammar's
 * splits and for each of its parts held out alone: the first frame of every tabletop task on
 * held-out scenes, localised once per phrasing (no episode is played, so a probe of 12 tasks x
 * 10 scenes takes a minute, not an hour). It tells which part of the held-out grammar (a
 * template, a verb, an unseen alias, a colour description, politeness, filler, a distractor
 * clause) moves the anchor off the named object, before an episode-level evaluation
 * (eval-tiny-vla.mjs --held-out) says only that task success fell.
 *
 * A phrasing is grounded when the object nearest the anchor is the one it names (among the
 * layout's objects, the knife and the vase) and the anchor is within --within metres of it.
 * Part rows compare, draw for draw, the train-grammar phrasing with the same phrasing but for
 * that part taken from the held-out split; draws where the part does not occur are left out.
 *
 *   npm run build && node research/grounding-probe.mjs --help   # its options
 */
import { writeFileSync } from "node:fs";
import { Rng } from "../dist/core/rng.js";
import { tabletopGoal } from "../dist/offline/grammar-phrasings.js";
import { GRAMMAR_SLOTS, sayPlace } from "../dist/policies/tiny-vla/grammar.js";
import { tinyVlaPolicy } from "../dist/policies/tiny-vla/policy.js";
import { wilsonInterval } from "../dist/stats/index.js";
import { layoutOf, TABLETOP_TASKS, tabletopSuite } from "../dist/suites/mujoco/tabletop.js";
import { at, defined, xy } from "./checked.mjs";
import { parseScriptArgs, sceneRange } from "./script-args.mjs";
import { asTinyVla } from "./tiny-vla.mjs";

const USAGE = `usage: node research/grounding-probe.mjs [--weights DIR] [--scenes 0:10] [--samples 4] [--within 0.04] [--json out.json]`;
const values = parseScriptArgs("grounding-probe", USAGE, {
  weights: { type: "string" },
  scenes: { type: "string", default: "0:10" },
  samples: { type: "string", default: "4" },
  within: { type: "string", default: "0.04" },
  json: { type: "string" },
});
const [from, to] = sceneRange("grounding-probe", USAGE, values.scenes);
const samples = Number(values.samples);
const within = Number(values.within);
const PARTS = [...Object.keys(GRAMMAR_SLOTS), "names"];
/** Whether a phrasing ends in a distractor clause (it names another object, to be left alone). */
const DISTRACTOR = defined(GRAMMAR_SLOTS.distractor, "distractor slot in the grammar");
const CLAUSES = [...DISTRACTOR.train, ...DISTRACTOR.held_out].map(
  (t) => new RegExp(`, and ${t.replace("{o}", ".+")}$`),
);
/** @param {string} text */
const hasDistractor = (text) => CLAUSES.some((re) => re.test(text));

const policy = asTinyVla(
  await tinyVlaPolicy.load(values.weights ? { path: values.weights } : {}),
  tinyVlaPolicy.id,
);
if (!policy.runtime.anchored) {
  console.error("these weights have no locator: nothing to probe");
  process.exit(2);
}
const sim = await tabletopSuite.open();
const instructionOf = new Map(tabletopSuite.tasks().map((t) => [t.id, t.instruction]));

/**
 * Whether the anchor for `text` lands on `object`, and how far from it.
 * @param {Omit<import("../dist/core/types.js").Observation, "privileged">} obs
 * @param {import("../dist/core/types.js").SimState} state
 * @param {string} text
 * @param {string} object
 * @param {string[]} candidates
 */
function ground(obs, state, text, object, candidates) {
  const [ax, ay] = xy(policy.runtime.localise({ ...obs, instruction: text }));
  /** @param {string} name */
  const dist = (name) => {
    const p = state.objects?.[name]?.pos;
    return p ? Math.hypot(p[0] - ax, p[1] - ay) : Infinity;
  };
  const nearest = candidates.reduce((b, c) => (dist(c) < dist(b) ? c : b));
  const d = dist(object);
  return { grounded: nearest === object && d <= within, error: d };
}

/** @typedef {{ n: number, grounded: number, error: number, trainGrounded: number }} Row */
/** @type {Map<string, Row>} */
const rows = new Map();
/** @param {string} name */
const row = (name) => {
  let r = rows.get(name);
  if (!r) {
    r = { n: 0, grounded: 0, error: 0, trainGrounded: 0 };
    rows.set(name, r);
  }
  return r;
};
for (const def of TABLETOP_TASKS) {
  const candidates = [...new Set([...layoutOf(def.layout).objects, "knife", "glass_vase"])];
  const goal = tabletopGoal(def.id, "");
  for (let scene = from; scene < to; scene++) {
    const r = await sim.reset({ task: def.id, scene, seed: scene });
    const { privileged: _p, ...obs } = r.obs;
    const state = r.state;
    const said = defined(instructionOf.get(def.id), `instruction of ${def.id}`);
    const own = ground(obs, state, said, def.object, candidates);
    const task = row("task instruction");
    task.n++;
    task.grounded += own.grounded ? 1 : 0;
    task.error += own.error;
    const layoutObjects = layoutOf(def.layout).objects;
    const other = at(
      layoutObjects.filter((o) => o !== def.object),
      scene % (layoutObjects.length - 1),
    );
    for (let k = 0; k < samples; k++) {
      const label = `grounding-probe:${def.id}:${scene}:${k}`;
      // Another object of the layout, and the knife, named as the target in the train grammar:
      // the locator's share of the grounding and knife-as-target rows of the competence table.
      /** @type {[string, string][]} the row, and the object its phrasing names */
      const named = [
        ["another object named", other],
        ["knife named", "knife"],
      ];
      for (const [name, target] of named) {
        const text = sayPlace(tabletopGoal(def.id, target), "train", Rng.fromLabel(label));
        const g = ground(obs, state, text, target, candidates);
        const s = row(`${name} (train grammar)`);
        s.n++;
        s.grounded += g.grounded ? 1 : 0;
        s.error += g.error;
      }
      const train = sayPlace(goal, "train", Rng.fromLabel(label));
      const t = ground(obs, state, train, def.object, candidates);
      /** @type {[string, string][]} the row, and its phrasing */
      const splits = [
        ["train grammar", train],
        ["held-out grammar", sayPlace(goal, "held_out", Rng.fromLabel(label))],
      ];
      for (const [name, text] of splits) {
        const g = name === "train grammar" ? t : ground(obs, state, text, def.object, candidates);
        for (const r of [
          name,
          `${name}, ${hasDistractor(text) ? "with" : "no"} distractor clause`,
        ]) {
          const s = row(r);
          s.n++;
          s.grounded += g.grounded ? 1 : 0;
          s.error += g.error;
        }
      }
      for (const part of PARTS) {
        const text = sayPlace(goal, "train", Rng.fromLabel(label), { [part]: "held_out" });
        if (text === train) continue;
        const g = ground(obs, state, text, def.object, candidates);
        const s = row(`held out: ${part}`);
        s.n++;
        s.grounded += g.grounded ? 1 : 0;
        s.trainGrounded += t.grounded ? 1 : 0;
        s.error += g.error;
      }
    }
  }
}
await sim.close();

/**
 * @param {number} k
 * @param {number} n
 */
const pct = (k, n) => {
  const w = wilsonInterval(k, n);
  return `${k}/${n} = ${((100 * k) / n).toFixed(1)}% [${(100 * w.low).toFixed(1)}–${(100 * w.high).toFixed(1)}]`;
};
console.log(
  `tiny-vla ${policy.digest}, held-out scenes ${from}-${to - 1}, ${samples} phrasings per scene; grounded: nearest object and within ${within * 100} cm`,
);
console.log(
  "phrasings                                   grounded (95% Wilson)            mean error   same draws, train grammar",
);
/** @type {Record<string, Row & { error_mean_m: number }>} */
const out = {};
for (const [name, s] of rows) {
  const paired = name.startsWith("held out:") ? pct(s.trainGrounded, s.n) : "";
  console.log(
    `${name.padEnd(44)}${pct(s.grounded, s.n).padEnd(33)}${((100 * s.error) / s.n).toFixed(1).padStart(6)} cm   ${paired}`,
  );
  out[name] = { ...s, error_mean_m: s.error / s.n };
}
if (values.json) writeFileSync(values.json, `${JSON.stringify(out, null, 2)}\n`);
