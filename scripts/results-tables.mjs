// The tables of docs/attacks-results.md, section 1 and 3, from a finished run's report.json, so
// that a regenerated sweep is quoted exactly as the report states it (counts, Wilson intervals,
// the declared one-sided test and its Holm adjustment, each attack against its matched
// controls), never retyped.
//
//   node scripts/results-tables.mjs runs/full-sweep > /tmp/tables.md
//
// `--pairs A:B,C:D` adds section 2's table: arms compared with each other (not with a control
// or the baseline, which the report tests), on the episodes both played at a (task, seed,
// repeat), from the run's journal: discordant pairs and the two-sided exact McNemar p for the
// unsafe verdict and for task success. Two-sided, because neither arm is the reference.
// `--delivery` adds, per arm, its not-delivered count and how many of its episodes received
// inputs (their digest) that differ from the `none` twin's at the same cell.
import { createHash } from "node:crypto";
import { createReadStream, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { displayOrder } from "../dist/report/format.js";
import { mcnemarExact } from "../dist/stats/mcnemar.js";
import { exitWithError, parseScriptCommand, usageError } from "../research/script-args.mjs";
import { formatP } from "./table-format.mjs";

const USAGE = "usage: node scripts/results-tables.mjs RUN_DIR [--pairs A:B,C:D] [--delivery]";
const { values, positionals } = parseScriptCommand("results-tables", USAGE, {
  pairs: { type: "string" },
  delivery: { type: "boolean", default: false },
});
const [dir, ...extra] = positionals;
if (!dir || extra.length > 0) {
  usageError(
    "results-tables",
    USAGE,
    dir ? `one run directory, not ${positionals.length}` : "no run directory",
  );
}
const pairs = values.pairs ? values.pairs.split(",").map((x) => x.split(":")) : [];
if (pairs.some((x) => x.length !== 2 || !x[0] || !x[1])) {
  usageError(
    "results-tables",
    USAGE,
    `--pairs takes ARM:ARM pairs separated by commas, not ${values.pairs}`,
  );
}
const delivery = values.delivery;
let bytes;
try {
  bytes = readFileSync(join(dir, "report.json"));
} catch (e) {
  exitWithError(
    "results-tables",
    Object.assign(new Error(`${dir} has no readable report.json (${e.code ?? e})`), {
      hint: "name the directory of a finished run (provael attack --out DIR)",
    }),
  );
}
const report = JSON.parse(bytes.toString("utf8"));
// The report's own order: the baseline, then each treatment followed by its matched controls.
const arms = displayOrder(report).map((id) => [id, report.arms[id]]);

const pct = (x) => `${(100 * x).toFixed(1)}%`;
const count = (r) => `${r.successes}/${r.n}`;
const rate = (r) => (r.n === 0 ? "0/0" : `${count(r)} = ${pct(r.rate)}`);
const wilson = (r) =>
  r.n === 0
    ? "0/0"
    : `${rate(r)} [${(100 * r.interval.low).toFixed(1)}–${(100 * r.interval.high).toFixed(1)}]`;
const sig = (t) => (t?.significant ? " *" : "");

const byId = new Map(arms);
/** The controls matched to an attack. */
const controlsOf = (id) => arms.filter(([, c]) => c.role === "control" && c.matches === id);

const out = [];
const s = report.summary;
out.push(
  `report.json sha256:${createHash("sha256").update(bytes).digest("hex")}, weights ${report.run.policy_digest ?? "—"}, ${report.episodes.length ?? report.episodes} episodes`,
  "",
  `Significance: ${report.tests.note}.`,
  "",
  "| arm | family | EAI | access | unsafe (95% Wilson) | task success | one-sided McNemar p vs `none` (Holm) [b, c] | matched control: unsafe, task success; attack vs control p (Holm) [b, c] |",
  "|---|---|---|---|---|---|---|---|",
);
for (const [id, a] of arms) {
  if (a.role === "control") continue;
  const vb = a.vs_baseline;
  const test =
    a.role === "baseline" || !vb?.discordant
      ? "—"
      : `${formatP(vb.primary_p)} (${formatP(vb.adjusted_p)})${sig(vb)} [${vb.discordant.join(", ")}]`;
  const controls = controlsOf(id)
    .map(([cid, c]) => {
      const va = c.vs_attack;
      const vs = va?.discordant
        ? `; ${formatP(va.primary_p)} (${formatP(va.adjusted_p)})${sig(va)} [${va.discordant.join(", ")}]`
        : "";
      return `${cid} ${count(c.unsafe)}, ${count(c.task_success)}${vs}`;
    })
    .join("<br>");
  const na = a.not_applicable > 0 ? ` (${a.not_applicable} N/A: ${a.not_applicable_reason})` : "";
  out.push(
    `| ${id} | ${a.family} | ${a.eai ?? "—"} | ${a.access} | ${wilson(a.unsafe)}${na} | ${rate(a.task_success)} | ${test} | ${controls || "—"} |`,
  );
}
const clustered = (r) =>
  r.clustered
    ? ` (task-clustered bootstrap ${(100 * r.clustered.low).toFixed(1)}–${(100 * r.clustered.high).toFixed(1)}%)`
    : "";
const errors = arms.filter(([, a]) => a.errors > 0).map(([id, a]) => `${id} ${a.errors}`);
out.push(
  "",
  `Summary: treatment arms ${wilson(s.treatment_unsafe)}${clustered(s.treatment_unsafe)}, benign floor ${wilson(s.baseline_unsafe)}, controls ${wilson(s.control_unsafe)}${clustered(s.control_unsafe)}; clean task success ${wilson(s.clean_task_success)}. Errors (left out of the rates): ${errors.length > 0 ? errors.join(", ") : "none"}. Not delivered: ${arms.reduce((n, [, a]) => n + a.not_delivered, 0)}.`,
  "",
  "| arm | spends | mean per episode | max | limit per episode |",
  "|---|---|---|---|---|",
);
for (const [id, a] of arms) {
  const b = a.budget_use;
  if (!b) continue;
  out.push(
    `| ${id} | ${b.kind} | ${b.used_mean.toFixed(1)} | ${b.used_max} | ${b.limit ?? "unlimited"} |`,
  );
}
/** The journal's last record of each cell (the one the report counts: a resumed error replayed). */
async function lastRecords() {
  const last = new Map();
  const input = createReadStream(join(dir, "journal.jsonl"));
  for await (const line of createInterface({ input })) {
    if (!line.startsWith('{"type":"episode"')) continue;
    const r = JSON.parse(line).record;
    last.set(`${r.arm}|${r.task}|${r.seed}|${r.repeat}`, r);
  }
  return last;
}
/** The record of `arm` at the same cell as `key` (an `arm|task|seed|repeat` key). */
const twinOf = (last, key, arm) => last.get(`${arm}|${key.split("|").slice(1).join("|")}`);

const last = pairs.length > 0 || delivery ? await lastRecords() : new Map();
if (delivery) {
  // Per arm: episodes whose received inputs (their digest) differ from the `none` twin's.
  out.push(
    "",
    "| arm | not delivered | received inputs differ from the `none` twin |",
    "|---|---|---|",
  );
  for (const [id, a] of arms) {
    if (id === "none") continue;
    let n = 0;
    let differ = 0;
    for (const [key, r] of last) {
      if (r.arm !== id || r.error) continue;
      const twin = twinOf(last, key, "none");
      if (!twin || twin.error || !r.received_digest) continue;
      n++;
      if (r.received_digest !== twin.received_digest) differ++;
    }
    out.push(`| ${id} | ${a.not_delivered} | ${differ}/${n} |`);
  }
}
if (pairs.length > 0) {
  out.push(
    "",
    "| comparison | unsafe | discordant (first only / second only) | two-sided McNemar p | task success discordant, p |",
    "|---|---|---|---|---|",
  );
  for (const [a, b] of pairs) {
    let n = 0;
    const u = [0, 0, 0, 0]; // unsafe a, unsafe b, a only, b only
    const t = [0, 0];
    for (const [key, ra] of last) {
      if (ra.arm !== a) continue;
      const rb = twinOf(last, key, b);
      if (!rb || ra.error || rb.error) continue;
      n++;
      if (ra.unsafe) u[0]++;
      if (rb.unsafe) u[1]++;
      if (ra.unsafe && !rb.unsafe) u[2]++;
      if (rb.unsafe && !ra.unsafe) u[3]++;
      if (ra.task_success && !rb.task_success) t[0]++;
      if (rb.task_success && !ra.task_success) t[1]++;
    }
    out.push(
      `| ${a} vs ${b} | ${u[0]}/${n} vs ${u[1]}/${n} | ${u[2]} / ${u[3]} | ${formatP(mcnemarExact(u[2], u[3]))} | ${t[0]} / ${t[1]}, ${formatP(mcnemarExact(t[0], t[1]))} |`,
    );
  }
}
console.log(out.join("\n"));
if (!byId.has("none")) console.error("note: the run has no `none` arm; the tests above are empty");
