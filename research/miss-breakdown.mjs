#!/usr/bin/env node
/**
 * Why tiny-vla missed: replays every episode of a `provael attack --attacks none` run on tabletop
 * that did not succeed, with the task object's position and the finger contacts logged, and
 * sorts each miss into one kind (docs/tiny-vla.md, "After shipping"):
 *
 *   - `nothing`: the gripper closed, but no finger ever touched the task's object;
 *   - `slipped`: both fingers touched it, and it never rose more than `--lift` above where it lay;
 *   - `dropped`: it rose more than that, and did not end in the basket.
 *
 * Each replay is checked against the run before it counts: the same scene digest, and every
 * action equal to the one in the run's trajectories.jsonl (so it is the run's episode, not a
 * look-alike); a replay that differs is printed as such and left out of the counts.
 *
 * `--true-anchor` (tiny-vla) plays each miss once more with the object's true (x, y) as the
 * episode's anchor in place of the locator's, and prints the locator's error on the first frame
 * beside whether the episode then succeeds: which misses are the locator's and which the actor's.
 *
 *   npm run build && node research/miss-breakdown.mjs --run RUN [--lift 0.05] [--true-anchor] [--json FILE]
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { policies } from "../dist/policies/index.js";
import { tabletopSuite } from "../dist/suites/mujoco/tabletop.js";
import { fingerContact } from "../dist/suites/mujoco/world.js";
import { at, defined, xy } from "./checked.mjs";
import { parseScriptArgs, usageError } from "./script-args.mjs";
import { objectPos, tabletopTask } from "./tabletop.mjs";
import { isTinyVla } from "./tiny-vla.mjs";

/** @typedef {import("../dist/index.js").runFiles.JournalHeaderFile} JournalHeader */
/** @typedef {import("../dist/index.js").runFiles.JournalEpisodeLine} JournalEpisodeLine */
/** @typedef {JournalEpisodeLine["record"]} EpisodeRecord */
/** @typedef {import("../dist/index.js").runFiles.TrajectoryStepFile} TrajectoryStep */

const USAGE =
  "usage: node research/miss-breakdown.mjs --run RUN [--lift 0.05] [--true-anchor] [--json FILE]   (RUN: a `provael attack` directory on tabletop)";
const values = parseScriptArgs("miss-breakdown", USAGE, {
  run: { type: "string" },
  lift: { type: "string", default: "0.05" },
  "true-anchor": { type: "boolean", default: false },
  json: { type: "string" },
});
const runDir = values.run ?? usageError("miss-breakdown", USAGE, "--run is required");
const liftLimit = Number(values.lift);

const [first, ...rest] = readFileSync(join(runDir, "journal.jsonl"), "utf8").trim().split("\n");
/** @type {JournalHeader} */
const header = JSON.parse(defined(first, `header line in ${runDir}/journal.jsonl`));
const { plan } = header;
if (plan.suite !== "tabletop") {
  console.error(
    `miss-breakdown: ${runDir} played suite '${plan.suite}'; only tabletop is replayed`,
  );
  process.exit(2);
}
// The latest line per cell wins, as in the run's report.
/** @type {Map<string, EpisodeRecord>} */
const records = new Map();
for (const l of rest) {
  /** @type {JournalEpisodeLine} */
  const e = JSON.parse(l);
  if (e.type === "episode") records.set(e.record.cell, e.record);
}
const misses = [...records.values()].filter(
  (r) => r.arm === "none" && r.error === null && !r.task_success,
);
/** @type {Map<string, TrajectoryStep[]>} */
const actions = new Map(misses.map((r) => [r.cell, []]));
for (const l of readFileSync(join(runDir, "trajectories.jsonl"), "utf8").split("\n")) {
  if (!l) continue;
  /** @type {TrajectoryStep} */
  const t = JSON.parse(l);
  actions.get(t.cell)?.push(t);
}
for (const list of actions.values()) list.sort((a, b) => a.step - b.step);

// The run's own policy and options (a weights path included), as recorded in its plan.
const policy = await policies.get(plan.policy).load(plan.policy_options ?? {});
/** With --true-anchor, the run's policy: only a tiny-vla has an anchor to replace. */
let localising;
if (values["true-anchor"]) {
  if (!isTinyVla(policy)) {
    console.error(
      `miss-breakdown: --true-anchor needs a policy that localises (tiny-vla), not '${plan.policy}'`,
    );
    process.exit(2);
  }
  localising = policy;
}
const sim = await tabletopSuite.open();
const specs = new Map(tabletopSuite.tasks().map((t) => [t.id, t]));

/**
 * Plays a miss again, as the run played it or (`trueAnchor`) with the object's true (x, y) as
 * the anchor, and follows the task object: whether both fingers ever held it, how high it rose,
 * the gripper's closes, and whether every action equals the run's (`logged`). With the true
 * anchor, `errorCm` is how far the locator's own anchor was from it (cm).
 * @param {EpisodeRecord} rec
 * @param {string} object
 * @param {{ trueAnchor?: import("../dist/policies/tiny-vla/policy.js").TinyVlaInstance,
 *   logged?: TrajectoryStep[] }} [how]
 */
async function replay(rec, object, { trueAnchor, logged = [] } = {}) {
  let r = await sim.reset({ task: rec.task, scene: rec.scene, seed: rec.seed });
  await policy.reset({ task: rec.task, seed: rec.seed, policySeed: rec.policy_seed });
  const out = {
    scene: sim.sceneDigest() === rec.scene_digest,
    actions: true,
    /** @type {number | undefined} */
    errorCm: undefined,
    touched: false,
    lift: 0,
    closes: 0,
    closed: false,
    success: false,
  };
  const z0 = objectPos(r.state, object)[2];
  if (trueAnchor) {
    const [tx, ty] = xy(objectPos(r.state, object));
    const { privileged: _, ...first } = r.obs;
    const [sx, sy] = xy(trueAnchor.runtime.localise(first));
    out.errorCm = Math.hypot(sx - tx, sy - ty) * 100;
    trueAnchor.setAnchor(Float32Array.from([tx, ty]));
  }
  const horizon = defined(specs.get(rec.task), `tabletop task '${rec.task}'`).horizon;
  for (let step = 0; step < horizon && step < rec.steps; step++) {
    const { privileged, ...obs } = r.obs;
    const action = await policy.act(obs);
    const want = logged[step]?.action;
    if (!want || want.some((v, i) => v !== action[i])) out.actions = false;
    r = await sim.step(action);
    const held = fingerContact(object, r.state.contacts ?? []);
    out.touched ||= held.left && held.right;
    out.lift = Math.max(out.lift, objectPos(r.state, object)[2] - z0);
    out.success ||= r.taskSuccess;
    const grip = at(action, action.length - 1) > 0;
    if (grip && !out.closed) out.closes++;
    out.closed = grip;
    if (r.done) break;
  }
  return out;
}

/**
 * @typedef {{ task: string, scene: number, seed: number, replayed: boolean,
 *   kind: "nothing" | "slipped" | "dropped", lift_m: number, closes: number,
 *   ends_closed: boolean, locator_error_cm?: number | undefined,
 *   true_anchor_success?: boolean }} MissRow
 */
/** @type {MissRow[]} */
const rows = [];
for (const rec of misses) {
  const object = tabletopTask(rec.task).object;
  const run = await replay(rec, object, { logged: actions.get(rec.cell) ?? [] });
  const { touched, lift, closes, closed } = run;
  const kind = !touched ? "nothing" : lift <= liftLimit ? "slipped" : "dropped";
  const anchored = localising ? await replay(rec, object, { trueAnchor: localising }) : undefined;
  /** @type {MissRow} */
  const row = {
    task: rec.task,
    scene: rec.scene,
    seed: rec.seed,
    replayed: run.scene && run.actions,
    kind,
    lift_m: Number(lift.toFixed(3)),
    closes,
    ends_closed: closed,
    ...(anchored
      ? { locator_error_cm: anchored.errorCm, true_anchor_success: anchored.success }
      : {}),
  };
  rows.push(row);
  const withAnchor = anchored
    ? `; locator ${anchored.errorCm?.toFixed(2)} cm off, with the true anchor ${anchored.success ? "succeeds" : "misses"}`
    : "";
  console.log(
    `${rec.task} seed ${rec.seed}: ${row.replayed ? kind : `NOT the run's episode (scene ${run.scene}, actions ${run.actions})`}, lifted ${(lift * 100).toFixed(1)} cm, ${closes} close(s), ends ${closed ? "closed" : "open"}${withAnchor}`,
  );
}
const counted = rows.filter((r) => r.replayed);
/** @param {MissRow["kind"]} k */
const count = (k) => counted.filter((r) => r.kind === k).length;
console.log(
  `\n${misses.length} misses in ${records.size} episodes; ${counted.length} replayed exactly: nothing ${count("nothing")}, slipped ${count("slipped")}, dropped ${count("dropped")}; ${counted.filter((r) => r.ends_closed).length} end closed`,
);
if (values["true-anchor"]) {
  /** @param {MissRow["kind"]} k */
  const saved = (k) => counted.filter((r) => r.kind === k && r.true_anchor_success).length;
  console.log(
    `with the true anchor: ${counted.filter((r) => r.true_anchor_success).length} of ${counted.length} succeed (nothing ${saved("nothing")}/${count("nothing")}, slipped ${saved("slipped")}/${count("slipped")}, dropped ${saved("dropped")}/${count("dropped")})`,
  );
}
for (const task of [...new Set(counted.map((r) => r.task))]) {
  const of = counted.filter((r) => r.task === task);
  /** @param {MissRow["kind"]} x */
  const k = (x) => of.filter((r) => r.kind === x).length;
  console.log(
    `  ${task}: ${of.length} (nothing ${k("nothing")}, slipped ${k("slipped")}, dropped ${k("dropped")})`,
  );
}
if (values.json)
  writeFileSync(
    values.json,
    `${JSON.stringify({ run: runDir, lift_m: liftLimit, misses: rows }, null, 2)}\n`,
  );
await policy.close?.();
await sim.close?.();
