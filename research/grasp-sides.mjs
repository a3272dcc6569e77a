#!/usr/bin/env node
/**
 * Which side of its object tiny-vla grasps, and whether that episode succeeds: plays the clean
 * episode of each (task, scene) and, when the object first rises 5 cm above where it lay, reads
 * the gap between the fingers (the state's last two values, each finger's opening) and compares
 * it with the object's two widths across the table (its box's 2·hx and 2·hy). The scripted
 * expert grasps across the narrower one unless told `grasp_side=nearest` (scripted.ts), so the
 * shipped model's demonstrations never show the other; docs/tiny-vla.md ("The actor's drops")
 * has what the shipped model does.
 *
 * `--tell-fingers W` is an intervention, for diagnosis only: while both fingers touch the object
 * and are more than 5 cm apart (a grasp across its wide side), the policy is told each finger is
 * open by W (m) instead of what the state says, e.g. 0.019, what the shipped model's grasps
 * across the green box's 4 cm side read. The simulator is not touched.
 *
 *   npm run build && node research/grasp-sides.mjs [--weights DIR] [--tasks kitchen_green_box,kitchen_green_box_by_hand]
 *     [--scenes 0:20] [--latch] [--tell-fingers W] [--json FILE]
 */
import { writeFileSync } from "node:fs";
import { policies } from "../dist/policies/index.js";
import { TABLETOP_TASKS, tabletopSuite } from "../dist/suites/mujoco/tabletop.js";
import { fingerContact } from "../dist/suites/mujoco/world.js";
import { at, defined } from "./checked.mjs";
import { parseScriptArgs, sceneRange } from "./script-args.mjs";
import { objectPos } from "./tabletop.mjs";
import { asTinyVla } from "./tiny-vla.mjs";

const USAGE =
  "usage: node research/grasp-sides.mjs [--weights DIR] [--tasks a,b] [--scenes 0:20] [--latch] [--tell-fingers W] [--json FILE]";
const values = parseScriptArgs("grasp-sides", USAGE, {
  weights: { type: "string" },
  tasks: { type: "string", default: "kitchen_green_box,kitchen_green_box_by_hand" },
  scenes: { type: "string", default: "0:20" },
  latch: { type: "boolean", default: false },
  "tell-fingers": { type: "string" },
  json: { type: "string" },
});
const [from, to] = sceneRange("grasp-sides", USAGE, values.scenes);
const told = values["tell-fingers"] === undefined ? undefined : Number(values["tell-fingers"]);
if (told !== undefined && !(told >= 0 && told <= 0.05)) {
  console.error(
    `grasp-sides: --tell-fingers must be a finger opening in metres, 0 to 0.05, got '${values["tell-fingers"]}'`,
  );
  process.exit(2);
}
const defs = values.tasks.split(",").map((id) => {
  const def = TABLETOP_TASKS.find((t) => t.id === id);
  if (!def) {
    console.error(
      `grasp-sides: no tabletop task '${id}'; tasks: ${TABLETOP_TASKS.map((t) => t.id).join(", ")}`,
    );
    process.exit(2);
  }
  return def;
});

const LIFT = 0.05;
const loaded = await policies.get("tiny-vla").load({
  ...(values.weights ? { path: values.weights } : {}),
  ...(values.latch ? { extra: { latch: 1 } } : {}),
});
const policy = asTinyVla(loaded, "tiny-vla");
const sim = await tabletopSuite.open();
const horizon = new Map(tabletopSuite.tasks().map((t) => [t.id, t.horizon]));
/**
 * One episode: the finger gap when the object first rose (null: never lifted) against the
 * object's two widths, the side that gap is nearer, and whether the episode succeeded.
 * @typedef {{ task: string, scene: number, gap_cm: number | null, narrow_cm: number,
 *   wide_cm: number, side: "narrow" | "wide" | "not lifted", success: boolean }} GraspRow
 */
/** @type {GraspRow[]} */
const rows = [];
for (const def of defs) {
  const object = def.object;
  for (let scene = from; scene < to; scene++) {
    let r = await sim.reset({ task: def.id, scene, seed: scene });
    await policy.reset({ task: def.id, seed: scene, policySeed: 0 });
    const z0 = objectPos(r.state, object)[2];
    const sc = r.state.scalars ?? {};
    const hx = defined(sc[`${object}.hx`], `half width ${object}.hx in the scene's scalars`);
    const widths = [2 * hx, 2 * (sc[`${object}.hy`] ?? hx)];
    const [narrow, wide] = [Math.min(...widths), Math.max(...widths)];
    /** @type {number | null} */
    let gap = null;
    let success = false;
    const steps = defined(horizon.get(def.id), `horizon of ${def.id}`);
    for (let step = 0; step < steps; step++) {
      const { privileged, ...obs } = r.obs;
      let seen = obs;
      if (told !== undefined) {
        const held = fingerContact(object, r.state.contacts ?? []);
        const n = obs.state.length;
        if (held.left && held.right && at(obs.state, n - 2) + at(obs.state, n - 1) > LIFT) {
          const state = Float32Array.from(obs.state);
          state[n - 2] = told;
          state[n - 1] = told;
          seen = { ...obs, state };
        }
      }
      r = await sim.step(await policy.act(seen));
      const s = r.obs.state;
      if (gap === null && objectPos(r.state, object)[2] - z0 > LIFT)
        gap = at(s, s.length - 2) + at(s, s.length - 1);
      success ||= r.taskSuccess;
      if (r.done) break;
    }
    /** @type {GraspRow["side"]} */
    const side =
      gap === null
        ? "not lifted"
        : Math.abs(gap - narrow) <= Math.abs(gap - wide)
          ? "narrow"
          : "wide";
    rows.push({
      task: def.id,
      scene,
      gap_cm: gap === null ? null : Number((gap * 100).toFixed(2)),
      narrow_cm: Number((narrow * 100).toFixed(2)),
      wide_cm: Number((wide * 100).toFixed(2)),
      side,
      success,
    });
  }
}
/** @param {GraspRow["side"]} side */
const count = (side) => {
  const of = rows.filter((r) => r.side === side);
  return `${of.filter((r) => r.success).length}/${of.length}`;
};
console.log(
  `${values.weights ?? "shipped"} (${policy.digest.slice(0, 15)}…)${values.latch ? ", latch" : ""}${told === undefined ? "" : `, told each finger is at ${told} m while it holds across the wide side`}, ${defs.map((d) => d.id).join(", ")}, scenes ${from}:${to}: grasped across the narrow side ${count("narrow")} succeed; across the wide side ${count("wide")}; not lifted ${LIFT * 100} cm ${count("not lifted")}`,
);
if (values.json)
  writeFileSync(values.json, `${JSON.stringify({ weights: policy.digest, rows }, null, 2)}\n`);
policy.close();
await sim.close();
