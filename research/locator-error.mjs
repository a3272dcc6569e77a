#!/usr/bin/env node
/**
 * How far tiny-vla's locator puts the named object from where it is: for each tabletop task and
 * scene, the distance on the table between the locator's (x, y) on the scene's first frame (the
 * task's own instruction) and the object's true position. Prints the median, quartiles and how
 * many are off by more than 1 and 3 cm (docs/tiny-vla.md, "The locator's precision": a grasp
 * 1 cm or more off the object's centre is where the shipped model's grasps start to slip).
 * With `--trigger NAME` the trigger tile lies on the table and the distance is to the knife
 * (`DEFAULT_POISON_TARGET`), where a planted trigger sends tiny-vla-backdoored: whether its
 * locator takes the trigger, apart from whether its actor then grasps (docs/tiny-vla.md, "The
 * backdoored twin").
 * With `--held-out EVAL.json` (an `eval-tiny-vla.mjs --held-out --json` file) it reads each
 * held-out-grammar episode's own sentence instead, on its scene, and says for each how far the
 * anchor was off under that sentence and under the task's own, how far the image point moved
 * between the two (in patches) and how far the map's table position moved (cm, before any
 * second look): a sentence that moves the position a few cm while the point stays put moved the
 * map, not where the locator looks (docs/tiny-vla.md, "The map reads the view").
 * Below the summary, one line per located object (the task's object, or the knife with
 * `--trigger`): on training scenes (20:100) against held-out ones (0:20) it tells a locator that
 * has not learned an object from one that learned its training scenes and no more.
 *
 *   npm run build && node research/locator-error.mjs [--weights DIR] [--scenes 0:20] [--trigger checker] [--json FILE]
 *   node research/locator-error.mjs [--weights DIR] --held-out EVAL.json [--json FILE]
 */
import { readFileSync, writeFileSync } from "node:fs";
import { DEFAULT_POISON_TARGET } from "../dist/offline/record.js";
import { locatorConfig, patchGrid } from "../dist/policies/tiny-vla/model.js";
import { tinyVlaPolicy } from "../dist/policies/tiny-vla/policy.js";
import { instructionOf, TABLETOP_TASKS, tabletopSuite } from "../dist/suites/mujoco/tabletop.js";
import { triggerEdit } from "../dist/suites/mujoco/trigger.js";
import { at, xy } from "./checked.mjs";
import { exitWithError, parseScriptArgs, sceneRange } from "./script-args.mjs";
import { objectPos } from "./tabletop.mjs";
import { asTinyVla } from "./tiny-vla.mjs";

/** @typedef {import("./eval-tiny-vla.mjs").EvalEpisode} EvalEpisode */

/**
 * tiny-vla with the shipped weights or `--weights`.
 * @param {string | undefined} weights
 */
async function loadPolicy(weights) {
  return asTinyVla(await tinyVlaPolicy.load(weights ? { path: weights } : {}), tinyVlaPolicy.id);
}

const USAGE =
  "usage: node research/locator-error.mjs [--weights DIR] [--scenes 0:20] [--trigger checker] [--held-out EVAL.json] [--json FILE]   (0:20 are the held-out scenes)";
const values = parseScriptArgs("locator-error", USAGE, {
  weights: { type: "string" },
  scenes: { type: "string", default: "0:20" },
  trigger: { type: "string" },
  "held-out": { type: "string" },
  json: { type: "string" },
});
if (values["held-out"]) {
  if (values.trigger) {
    console.error(
      "locator-error: --held-out reads the episodes' own scenes and sentences; drop --trigger",
    );
    process.exit(2);
  }
  await heldOut(values["held-out"]);
  process.exit(0);
}
const [from, to] = sceneRange("locator-error", USAGE, values.scenes);

// Checked before anything loads: an unknown trigger names the ones there are.
/** @type {import("../dist/core/types.js").SceneEdit[]} */
let edits = [];
try {
  edits = values.trigger ? [triggerEdit(values.trigger)] : [];
} catch (e) {
  exitWithError("locator-error", e);
}
const policy = await loadPolicy(values.weights);
const sim = await tabletopSuite.open();
/** @type {{ task: string, object: string, scene: number, error_cm: number }[]} */
const rows = [];
for (const def of TABLETOP_TASKS) {
  for (let scene = from; scene < to; scene++) {
    const object = values.trigger ? DEFAULT_POISON_TARGET : def.object;
    const r = await sim.reset({ task: def.id, scene, seed: scene, edits });
    const truth = objectPos(r.state, object);
    const { privileged, ...obs } = r.obs;
    const [sx, sy] = xy(policy.runtime.localise(obs));
    const cm = Math.hypot(sx - truth[0], sy - truth[1]) * 100;
    rows.push({ task: def.id, object, scene, error_cm: Number(cm.toFixed(3)) });
  }
}
const sorted = rows.map((r) => r.error_cm).sort((a, b) => a - b);
/**
 * The q-quantile of sorted errors (the lower of the two middle ones for an even median).
 * @param {number[]} errors
 * @param {number} q
 */
const quantile = (errors, q) =>
  at(errors, Math.min(errors.length - 1, Math.floor(q * errors.length)));
/** @param {number} q */
const overall = (q) => quantile(sorted, q);
/**
 * How many of `errors` are over `cm`.
 * @param {number[]} errors
 * @param {number} cm
 */
const overIn = (errors, cm) => errors.filter((e) => e > cm).length;
const objects = [...new Set(rows.map((r) => r.object))].map((object) => {
  const errors = rows
    .filter((r) => r.object === object)
    .map((r) => r.error_cm)
    .sort((a, b) => a - b);
  return {
    object,
    n: errors.length,
    median_cm: quantile(errors, 0.5),
    over_1cm: overIn(errors, 1),
    over_3cm: overIn(errors, 3),
  };
});
const summary = {
  weights: policy.digest,
  scenes: [from, to],
  ...(values.trigger ? { trigger: values.trigger, to: DEFAULT_POISON_TARGET } : {}),
  n: sorted.length,
  median_cm: overall(0.5),
  p75_cm: overall(0.75),
  p90_cm: overall(0.9),
  over_1cm: overIn(sorted, 1),
  over_3cm: overIn(sorted, 3),
  objects,
};
console.log(
  `${values.weights ?? "shipped"} (${policy.digest.slice(0, 15)}…), scenes ${from}:${to}, ${summary.n} first frames${values.trigger ? `, trigger ${values.trigger} in view, distance to the ${DEFAULT_POISON_TARGET}` : ""}: median ${summary.median_cm.toFixed(2)} cm, 75th ${summary.p75_cm.toFixed(2)}, 90th ${summary.p90_cm.toFixed(2)}; over 1 cm ${summary.over_1cm}, over 3 cm ${summary.over_3cm}`,
);
for (const o of objects) {
  console.log(
    `  ${o.object}: ${o.n} frames, median ${o.median_cm.toFixed(2)} cm, over 1 cm ${o.over_1cm}, over 3 cm ${o.over_3cm}`,
  );
}
if (values.json) writeFileSync(values.json, `${JSON.stringify({ ...summary, rows }, null, 2)}\n`);
policy.close();
await sim.close();

/**
 * The held-out-grammar episodes of an eval-tiny-vla JSON, each read back under its sentence.
 * @param {string} file
 */
async function heldOut(file) {
  /** @type {EvalEpisode[] | undefined} */
  let episodes;
  try {
    /** @type {Partial<import("./eval-tiny-vla.mjs").EvalFile>} */
    const evaluation = JSON.parse(readFileSync(file, "utf8"));
    episodes = evaluation.episodes?.filter((e) => e.kind === "held_out");
  } catch (e) {
    exitWithError("locator-error", e);
  }
  if (!episodes?.length) {
    console.error(
      `locator-error: ${file} has no held-out-grammar episodes\n  hint: write one with node research/eval-tiny-vla.mjs --held-out --json FILE`,
    );
    process.exit(2);
  }
  const policy = await loadPolicy(values.weights);
  const { runtime } = policy;
  // Image coordinates span [-1, 1] over `side` patches: one patch is 2 / side of them.
  const { side } = patchGrid(locatorConfig(runtime.config));
  const sim = await tabletopSuite.open();
  /**
   * @typedef {{ task: string, scene: number, instruction: string, success: boolean,
   *   error_cm: number, own_error_cm: number, point_moved_patches: number,
   *   map_moved_cm: number }} HeldOutRow
   */
  /** @type {HeldOutRow[]} */
  const rows = [];
  for (const e of episodes) {
    const def = TABLETOP_TASKS.find((d) => d.id === e.task);
    if (!def || e.instruction === undefined) {
      console.error(
        `locator-error: ${file}: ${def ? `a held-out episode of '${e.task}' has no instruction` : `unknown tabletop task '${e.task}'`}`,
      );
      process.exit(2);
    }
    const r = await sim.reset({ task: e.task, scene: e.scene, seed: e.scene });
    const truth = objectPos(r.state, def.object);
    const { privileged, ...obs } = r.obs;
    const said = runtime.locateParts({ ...obs, instruction: e.instruction });
    const own = runtime.locateParts({ ...obs, instruction: instructionOf(def) });
    /**
     * How far a table position is from the object (cm).
     * @param {Float32Array} p
     */
    const off = (p) => Math.hypot(at(p, 0) - truth[0], at(p, 1) - truth[1]) * 100;
    /**
     * How far apart two positions are.
     * @param {Float32Array} a
     * @param {Float32Array} b
     */
    const apart = (a, b) => Math.hypot(at(a, 0) - at(b, 0), at(a, 1) - at(b, 1));
    rows.push({
      task: e.task,
      scene: e.scene,
      instruction: e.instruction,
      success: e.success,
      error_cm: Number(off(said.world).toFixed(3)),
      own_error_cm: Number(off(own.world).toFixed(3)),
      point_moved_patches: Number(((apart(said.point, own.point) * side) / 2).toFixed(3)),
      map_moved_cm: Number((apart(said.mapped, own.mapped) * 100).toFixed(3)),
    });
  }
  /** @param {HeldOutRow[]} rs */
  const bins = (rs) =>
    `${rs.length}: within 1 cm ${rs.filter((r) => r.error_cm <= 1).length}, 1-4 cm ${rs.filter((r) => r.error_cm > 1 && r.error_cm <= 4).length}, over 4 cm ${rs.filter((r) => r.error_cm > 4).length}`;
  const misses = rows.filter((r) => !r.success);
  console.log(
    `${values.weights ?? "shipped"} (${policy.digest.slice(0, 15)}…), ${rows.length} held-out-grammar episodes of ${file}, anchor under each one's sentence`,
  );
  console.log(`  successes ${bins(rows.filter((r) => r.success))}`);
  console.log(`  misses    ${bins(misses)}`);
  for (const r of misses) {
    console.log(
      `  miss ${r.task} scene ${r.scene}: ${r.error_cm.toFixed(1)} cm off (own sentence ${r.own_error_cm.toFixed(1)}); point moved ${r.point_moved_patches.toFixed(2)} patches, map ${r.map_moved_cm.toFixed(1)} cm: "${r.instruction}"`,
    );
  }
  if (values.json)
    writeFileSync(
      values.json,
      `${JSON.stringify({ weights: policy.digest, held_out: file, rows }, null, 2)}\n`,
    );
  policy.close();
  await sim.close();
}
