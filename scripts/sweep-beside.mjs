// Two sweeps of the same cells on two weights, side by side: docs/attacks-results.md's
// "vB beside vA" tables. A sweep is kept as a small summary (docs/sweeps/*.json) because a
// full sweep's journal is ~600 MB and its report ~7 MB; the summary keeps what the comparison
// needs: per arm its counts and verdict under the declared rule, and, when made from a run on
// disk, one character per cell so that the next sweep can be compared pair by pair.
//
//   node scripts/sweep-beside.mjs summary RUN_DIR --label v2.2 > docs/sweeps/tiny-vla-v2.2.json
//   node scripts/sweep-beside.mjs beside docs/sweeps/tiny-vla-v2.1.json docs/sweeps/tiny-vla-v2.2.json
//
// Cell characters, in `cell_order` (the run's tasks in its order, each with its seeds, repeat 0
// first): `U` unsafe and task done, `u` unsafe, `s` safe and task done, `.` safe and not done,
// `e` an error, `n` not applicable, `-` not played.
//
// `beside` marks an arm **moved** by the rule that fits what both summaries hold: with cells on
// both sides, the two-sided exact McNemar test on the cells both played (p < 0.05, one test per
// row, no adjustment: a description of what changed, not a claim the report makes); without
// them, the two 95% Wilson intervals not overlapping (conservative; no test is claimed).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { displayOrder } from "../dist/report/format.js";
import { mcnemarExact } from "../dist/stats/mcnemar.js";
import { wilsonInterval } from "../dist/stats/wilson.js";
import { parseScriptCommand, usageError } from "../research/script-args.mjs";
import { formatP } from "./table-format.mjs";

const USAGE =
  "usage: node scripts/sweep-beside.mjs summary RUN_DIR --label NAME\n" +
  "       node scripts/sweep-beside.mjs beside BEFORE.json AFTER.json";
const { values, positionals } = parseScriptCommand("sweep-beside", USAGE, {
  label: { type: "string" },
});
const [mode, a, b, ...extra] = positionals;
const usage = (message) => usageError("sweep-beside", USAGE, message);

function fail(message) {
  console.error(`sweep-beside: ${message}`);
  process.exit(1);
}

/** One character for an episode of the report (see the header). */
function code(e) {
  if (e.termination === "not_applicable") return "n";
  if (e.error) return "e";
  if (e.unsafe) return e.task_success ? "U" : "u";
  return e.task_success ? "s" : ".";
}

function summary(dir, label) {
  const bytes = readFileSync(join(dir, "report.json"));
  const report = JSON.parse(bytes.toString("utf8"));
  const { run } = report;
  const order = [];
  for (const task of run.tasks)
    for (let seed = run.seed; seed < run.seed + run.seeds; seed++)
      for (let repeat = 0; repeat < run.repeats; repeat++) order.push(`${task}|${seed}|${repeat}`);
  const at = new Map(order.map((k, i) => [k, i]));
  const cells = new Map();
  for (const e of report.episodes) {
    const i = at.get(`${e.task}|${e.seed}|${e.repeat}`);
    if (i === undefined)
      fail(`${dir}: an episode outside the run's cells (${e.task} seed ${e.seed})`);
    if (!cells.has(e.arm)) cells.set(e.arm, Array(order.length).fill("-"));
    cells.get(e.arm)[i] = code(e);
  }
  const arms = {};
  for (const id of displayOrder(report)) {
    const x = report.arms[id];
    arms[id] = {
      role: x.role,
      ...(x.matches ? { matches: x.matches } : {}),
      unsafe: [x.unsafe.successes, x.unsafe.n],
      task_success: [x.task_success.successes, x.task_success.n],
      errors: x.errors,
      not_applicable: x.not_applicable,
      significant: x.vs_baseline?.significant ?? false,
      cells: (cells.get(id) ?? []).join(""),
    };
  }
  return {
    label,
    report: `sha256:${createHash("sha256").update(bytes).digest("hex")}`,
    weights: run.policy_digest,
    suite: run.suite,
    policy: run.policy,
    significance: report.tests.note,
    cell_order: `tasks ${run.tasks.join(",")} × seeds ${run.seed}-${run.seed + run.seeds - 1} × repeats ${run.repeats}`,
    arms,
  };
}

const pct = (k, n) => (n === 0 ? "0/0" : `${k}/${n} = ${((100 * k) / n).toFixed(1)}%`);
function wilson([k, n]) {
  if (n === 0) return "N/A";
  const w = wilsonInterval(k, n);
  return `${pct(k, n)} [${(100 * w.low).toFixed(1)}–${(100 * w.high).toFixed(1)}]`;
}
const apart = ([k1, n1], [k2, n2]) => {
  if (n1 === 0 || n2 === 0) return "";
  const w1 = wilsonInterval(k1, n1);
  const w2 = wilsonInterval(k2, n2);
  if (w1.low > w2.high) return "down";
  if (w2.low > w1.high) return "up";
  return "—";
};
/** Discordant cells (before only, after only) for a predicate on the cell characters. */
function discordant(c1, c2, hit) {
  let first = 0;
  let second = 0;
  for (let i = 0; i < Math.min(c1.length, c2.length); i++) {
    if ("en-".includes(c1[i]) || "en-".includes(c2[i])) continue;
    const x = hit(c1[i]);
    const y = hit(c2[i]);
    if (x && !y) first++;
    if (y && !x) second++;
  }
  return [first, second];
}
const isUnsafe = (c) => c === "u" || c === "U";
const isDone = (c) => c === "s" || c === "U";

function beside(before, after) {
  const hasCells = (sweep) => Object.values(sweep.arms).some((x) => x.cells);
  const paired = hasCells(before) && hasCells(after);
  if (paired && before.cell_order !== after.cell_order)
    fail(
      `the two sweeps played different cells, so they cannot be paired:\n  ${before.label}: ${before.cell_order}\n  ${after.label}: ${after.cell_order}`,
    );
  const ids = [
    ...Object.keys(after.arms),
    ...Object.keys(before.arms).filter((id) => !(id in after.arms)),
  ];
  const [p, q] = [before.label, after.label];
  const out = [];
  out.push(
    paired
      ? `| arm | role | unsafe, ${p} | unsafe, ${q} | ${p} only : ${q} only, p | task success, ${p} | task success, ${q} | ${p} only : ${q} only, p |`
      : `| arm | role | unsafe, ${p} | unsafe, ${q} | moved | task success, ${p} | task success, ${q} | moved |`,
    "|---|---|---|---|---|---|---|---|",
  );
  const moved = [];
  for (const id of ids) {
    const x = before.arms[id];
    const y = after.arms[id];
    const ref = y ?? x;
    const role = ref.role === "control" ? `control (${ref.matches})` : ref.role;
    const star = (r) => (r?.significant ? " *" : "");
    const u1 = x ? `${wilson(x.unsafe)}${star(x)}` : "not in this sweep";
    const u2 = y ? `${wilson(y.unsafe)}${star(y)}` : "not in this sweep";
    const t = (r) =>
      r && r.task_success[1] > 0 ? `${r.task_success[0]}/${r.task_success[1]}` : "";
    if (!x || !y || x.unsafe[1] === 0 || y.unsafe[1] === 0) {
      out.push(`| ${id} | ${role} | ${u1} | ${u2} |  | ${t(x)} | ${t(y)} |  |`);
      continue;
    }
    let mu;
    let mt;
    if (paired && x.cells && y.cells) {
      // Discordant cells and the exact p, marked up or down when p < 0.05.
      const paired = (hit) => {
        const [first, second] = discordant(x.cells, y.cells, hit);
        const pv = mcnemarExact(first, second);
        const way = pv < 0.05 ? (second > first ? " up" : " down") : "";
        return `${first} : ${second}, ${formatP(pv)}${way}`;
      };
      mu = paired(isUnsafe);
      mt = paired(isDone);
    } else {
      mu = apart(x.unsafe, y.unsafe);
      mt = apart(x.task_success, y.task_success);
    }
    for (const [what, m] of [
      ["unsafe", mu],
      ["task success", mt],
    ])
      if (/up|down/.test(m)) moved.push(`${id} ${what} ${m.match(/up|down/)[0]}`);
    out.push(`| ${id} | ${role} | ${u1} | ${u2} | ${mu} | ${t(x)} | ${t(y)} | ${mt} |`);
  }
  out.push("", `Moved: ${moved.length > 0 ? moved.join("; ") : "none"}.`);
  out.push(
    "",
    `${p}: report ${before.report}, weights ${before.weights}; ${q}: report ${after.report}, weights ${after.weights}.`,
  );
  return out.join("\n");
}

if (mode === "summary") {
  const label = values.label;
  if (!a || !label || b !== undefined) usage("summary needs one RUN_DIR and --label");
  // One line per arm: the file is read by people as well as by `beside`, and diffs stay small.
  const { arms, ...head } = summary(a, label);
  const lines = Object.entries(arms).map(
    ([id, x]) => `    ${JSON.stringify(id)}: ${JSON.stringify(x)}`,
  );
  const top = JSON.stringify(head, null, 2).slice(0, -2);
  console.log(`${top},\n  "arms": {\n${lines.join(",\n")}\n  }\n}`);
} else if (mode === "beside") {
  if (!a || !b || extra.length > 0) usage("beside needs two summaries");
  const read = (f) => JSON.parse(readFileSync(f, "utf8"));
  console.log(beside(read(a), read(b)));
} else usage(mode ? `unknown mode ${mode}: summary or beside` : "no mode: summary or beside");
