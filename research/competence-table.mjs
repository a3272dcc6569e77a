// The competence table of docs/tiny-vla.md ("Competence"), per task and overall with 95% Wilson
// intervals, from the runs that measure it, so that it is printed, never retyped:
//
//   provael attack --policy tiny-vla --attacks none --seeds 20 --no-controls --out runs/clean
//   node research/eval-tiny-vla.mjs --scenes 0:20 --no-clean --held-out --knife --json e.json
//   node research/competence-table.mjs --run runs/clean --eval e.json [--eval more.json …]
//
// Clean success and the benign floor (unsafe in the `none` arm) come from the run's report.json;
// grounding, held-out grammar and knife-as-target from eval-tiny-vla's --json files (shards of
// one evaluation are summed; a column no file measured prints "not run"). Every file must
// describe the same weights: the run's `policy_digest` and each file's `weights_digest`.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { wilsonInterval } from "../dist/stats/index.js";

/** @typedef {import("../dist/index.js").Report} Report */
/**
 * What this table reads of an eval-tiny-vla --json file.
 * @typedef {Pick<import("./eval-tiny-vla.mjs").EvalFile, "weights_digest" | "per_task">} Eval
 */
/**
 * Successes and trials.
 * @typedef {[number, number]} Count
 */

const { values } = parseArgs({
  options: { run: { type: "string" }, eval: { type: "string", multiple: true } },
});
if (!values.run) {
  console.error("usage: node research/competence-table.mjs --run RUN_DIR [--eval FILE.json]…");
  process.exit(2);
}

/** @type {Report} */
const report = JSON.parse(readFileSync(join(values.run, "report.json"), "utf8"));
const evals = (values.eval ?? []).map((f) => {
  /** @type {Eval} */
  const d = JSON.parse(readFileSync(f, "utf8"));
  return { f, d };
});
for (const { f, d } of evals) {
  if (d.weights_digest !== report.run.policy_digest) {
    console.error(
      `${f} measured weights ${d.weights_digest}, the run ${report.run.policy_digest}: not one model`,
    );
    process.exit(1);
  }
}

/**
 * "k/n" as a count.
 * @param {string} s
 * @returns {Count}
 */
const pair = (s) => {
  const m = /^(\d+)\/(\d+)$/.exec(s);
  if (!m) throw new Error(`a count is k/n, got '${s}'`);
  return [Number(m[1]), Number(m[2])];
};
/**
 * @param {Count} a
 * @param {Count} b
 * @returns {Count}
 */
const add = (a, b) => [a[0] + b[0], a[1] + b[1]];
/** @param {Count} count */
const rated = ([k, n]) => {
  if (n === 0) return "not run";
  const w = wilsonInterval(k, n, { confidence: 0.95 });
  /** @param {number} x */
  const pct = (x) => (100 * x).toFixed(1);
  return `${k}/${n} = ${pct(k / n)}% [${pct(w.low)}-${pct(w.high)}]`;
};
/** @param {Count} count */
const cell = ([k, n]) => (n === 0 ? "not run" : `${k}/${n}`);

const episodes = report.episodes.filter((e) => e.arm === "none" && e.error === null);
const tasks = [...new Set(report.episodes.map((e) => e.task))];
/** @typedef {"clean" | "held_out" | "grounding" | "knife" | "unsafe"} Column */
/** @type {Column[]} */
const columns = ["clean", "held_out", "grounding", "knife", "unsafe"];
/** @type {Record<Column, Count>} */
const total = { clean: [0, 0], held_out: [0, 0], grounding: [0, 0], knife: [0, 0], unsafe: [0, 0] };

console.log(
  "| task | clean success | held-out grammar | grounding | knife named, knife grasped | unsafe (`none` arm) |",
);
console.log("| --- | --- | --- | --- | --- | --- |");
for (const task of tasks) {
  const mine = episodes.filter((e) => e.task === task);
  /** @type {Record<Column, Count>} */
  const row = {
    clean: [mine.filter((e) => e.task_success).length, mine.length],
    unsafe: [mine.filter((e) => e.unsafe).length, mine.length],
    held_out: [0, 0],
    grounding: [0, 0],
    knife: [0, 0],
  };
  for (const { d } of evals) {
    const t = d.per_task.find((r) => r.task === task);
    if (!t) continue;
    for (const c of /** @type {const} */ (["held_out", "grounding", "knife"]))
      row[c] = add(row[c], pair(t[c]));
  }
  for (const c of columns) total[c] = add(total[c], row[c]);
  console.log(`| ${task} | ${columns.map((c) => cell(row[c])).join(" | ")} |`);
}
/** @param {Column} c */
const bold = (c) => (total[c][1] === 0 ? "not run" : `**${rated(total[c])}**`);
console.log(`| **all ${tasks.length} tasks** | ${columns.map(bold).join(" | ")} |`);
console.log(
  `\nweights ${report.run.policy_digest}; clean success and floor: ${values.run} (${episodes.length} episodes of the none arm)`,
);
