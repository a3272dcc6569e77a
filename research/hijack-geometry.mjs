#!/usr/bin/env node
/**
 * Where an action-channel push took the robot, read off a tabletop run's trajectories
 * (docs/attacks-results.md, "`targeted_hijack` falls"): for the `none` arm and the pushed arm,
 *
 *   - the closest the gripper came to the task's hazard (horizontal distance to the hazard's
 *     position, `TaskSpec.hazard.targetPos`), as quantiles and a count within `--near`;
 *   - how far the push took it off its benign path: the largest horizontal gap between the pushed
 *     episode and the `none` episode of the same task and seed, step by step;
 *   - for arms that record their push (`targeted_hijack`, `random_hijack_search`: the budget's
 *     `push` and `last_score`), the cosine between the last push and the direction from the
 *     gripper to the hazard at the last search (the search runs every `--refresh` steps, the
 *     attack's own default 25), and the search's last score.
 *
 * A search that rates displacements by the policy's next motion toward the hazard can pick
 * points away from it when the policy answers a displacement by heading back: this tells a push
 * that carried the robot to the hazard from one that carried it elsewhere.
 *
 *   npm run build && node research/hijack-geometry.mjs --run RUN [--arm targeted_hijack] [--refresh 25] [--near 0.05]
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tabletopSuite } from "../dist/suites/mujoco/tabletop.js";
import { at, defined } from "./checked.mjs";
import { parseScriptArgs, usageError } from "./script-args.mjs";

/** @typedef {import("../dist/index.js").Report} Report */
/** @typedef {Report["episodes"][number]} Episode */
/** @typedef {import("../dist/index.js").runFiles.TrajectoryStepFile} TrajectoryStep */

const USAGE =
  "usage: node research/hijack-geometry.mjs --run RUN [--arm targeted_hijack] [--refresh 25] [--near 0.05]   (RUN: a `provael attack` directory on tabletop with the `none` arm)";
const values = parseScriptArgs("hijack-geometry", USAGE, {
  run: { type: "string" },
  arm: { type: "string", default: "targeted_hijack" },
  refresh: { type: "string", default: "25" },
  near: { type: "string", default: "0.05" },
});
/**
 * @param {string} message
 * @returns {never}
 */
function fail(message) {
  return usageError("hijack-geometry", USAGE, message);
}
const run = values.run ?? fail("--run is required");
const refresh = Number(values.refresh);
const near = Number(values.near);
if (!Number.isInteger(refresh) || refresh < 1)
  fail(`--refresh must be a whole number of steps, got '${values.refresh}'`);
if (!(near > 0)) fail(`--near must be a distance in metres above 0, got '${values.near}'`);

/** @type {Report} */
let report;
try {
  report = JSON.parse(readFileSync(join(run, "report.json"), "utf8"));
} catch (e) {
  fail(`cannot read ${join(run, "report.json")}: ${e instanceof Error ? e.message : e}`);
}
if (report.run?.suite !== "tabletop")
  fail(`${run} played suite '${report.run?.suite}'; only tabletop has hazard positions here`);
const tasks = new Map(tabletopSuite.tasks().map((t) => [t.id, t]));
const episodes = report.episodes.filter((e) => !e.error);
/** @param {string} arm */
const byArm = (arm) => episodes.filter((e) => e.arm === arm);
if (byArm("none").length === 0) fail(`${run} has no finished episode of the \`none\` arm`);
if (byArm(values.arm).length === 0) fail(`${run} has no finished episode of '${values.arm}'`);

// Gripper positions by cell and step (null: the suite reported none at that step).
/** @type {Map<string, (TrajectoryStep["pose"] | undefined)[]>} */
const poses = new Map();
for (const line of readFileSync(join(run, "trajectories.jsonl"), "utf8").split("\n")) {
  if (!line) continue;
  /** @type {TrajectoryStep} */
  const s = JSON.parse(line);
  let cell = poses.get(s.cell);
  if (!cell) {
    cell = [];
    poses.set(s.cell, cell);
  }
  cell[s.step] = s.pose;
}
/** @param {Episode} e */
const hazardOf = (e) => {
  const task = defined(tasks.get(e.task), `tabletop task '${e.task}'`);
  return defined(task.hazard.targetPos, `hazard position of ${e.task}`);
};
/**
 * Horizontal distance.
 * @param {ArrayLike<number>} a
 * @param {ArrayLike<number>} b
 */
const flat = (a, b) => Math.hypot(at(a, 0) - at(b, 0), at(a, 1) - at(b, 1));
/** @param {number[]} xs */
const sorted = (xs) => [...xs].sort((a, b) => a - b);
/**
 * The `q` quantile of sorted `xs` (the lower of the two around it).
 * @param {number[]} xs
 * @param {number} q
 */
const quantile = (xs, q) => at(xs, Math.floor(q * (xs.length - 1)));
/** @param {number} m */
const cm = (m) => `${(100 * m).toFixed(1)} cm`;

for (const arm of ["none", values.arm]) {
  const closest = sorted(
    byArm(arm).map((e) =>
      Math.min(
        ...(poses.get(e.cell) ?? []).filter((p) => p != null).map((p) => flat(p, hazardOf(e))),
      ),
    ),
  );
  console.log(
    `${arm}: closest approach to the hazard, 10th ${cm(quantile(closest, 0.1))}, median ${cm(quantile(closest, 0.5))}, 90th ${cm(quantile(closest, 0.9))}; within ${cm(near)} in ${closest.filter((d) => d < near).length} of ${closest.length}`,
  );
}

/** @param {Episode} e */
const key = (e) => `${e.task}#${e.seed}#${e.repeat}`;
const benign = new Map(byArm("none").map((e) => [key(e), e]));
/** @type {number[]} */
const gaps = [];
/** @type {{ cos: number, unsafe: boolean }[]} */
const cosines = [];
/** @type {number[]} */
const scores = [];
for (const e of byArm(values.arm)) {
  const pushed = poses.get(e.cell) ?? [];
  const twin = benign.get(key(e));
  if (twin) {
    const calm = poses.get(twin.cell) ?? [];
    let gap = 0;
    for (let i = 0; i < Math.min(pushed.length, calm.length); i++) {
      const [a, b] = [pushed[i], calm[i]];
      if (a && b) gap = Math.max(gap, flat(a, b));
    }
    gaps.push(gap);
  }
  // What the hijack arms record of their search (`detail` is each attack's own).
  const detail = e.budget?.detail;
  const u = detail?.push;
  const searches = detail?.searches;
  if (!isVec3(u) || typeof searches !== "number" || !(searches > 0)) continue;
  const p = pushed[(searches - 1) * refresh];
  if (!p) continue;
  const h = hazardOf(e);
  /** @type {[number, number, number]} */
  const to = [h[0] - at(p, 0), h[1] - at(p, 1), h[2] - at(p, 2)];
  const dot = u[0] * to[0] + u[1] * to[1] + u[2] * to[2];
  cosines.push({ cos: dot / (Math.hypot(...u) * Math.hypot(...to)), unsafe: e.unsafe === true });
  if (typeof detail?.last_score === "number") scores.push(detail.last_score);
}
if (gaps.length > 0)
  console.log(
    `${values.arm} against \`none\` on the same cell: largest gap between the two paths, median ${cm(quantile(sorted(gaps), 0.5))} over ${gaps.length} pairs`,
  );
/** @param {number[]} xs */
const mean = (xs) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : Number.NaN);
if (cosines.length > 0) {
  const unsafe = cosines.filter((c) => c.unsafe).map((c) => c.cos);
  console.log(
    `${values.arm}: last push against the direction to the hazard, mean cosine ${mean(cosines.map((c) => c.cos)).toFixed(2)}, toward it (cosine > 0) in ${cosines.filter((c) => c.cos > 0).length} of ${cosines.length}${unsafe.length ? `; in the ${unsafe.length} unsafe episodes ${mean(unsafe).toFixed(2)}` : ""}`,
  );
}
if (scores.length > 0)
  console.log(
    `${values.arm}: the search's last score, median ${quantile(sorted(scores), 0.5).toFixed(3)}`,
  );

/**
 * A recorded push: three numbers.
 * @param {unknown} v
 * @returns {v is [number, number, number]}
 */
function isVec3(v) {
  return Array.isArray(v) && v.length === 3 && v.every((x) => typeof x === "number");
}
