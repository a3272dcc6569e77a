// The tables of docs/attacks-results.md, section 1 and 3, from a finished run's report.json, so
// that a regenerated sweep is quoted exactly as the report states it (counts, Wilson intervals,
// the declared one-sided test and its Holm adjustment, each attack against its matched
// controls), never retyped.
//
//   node scripts/results-tables.mjs runs/full-sweep > /tmp/tables.md
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { displayOrder } from "../dist/report/markdown.js";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node scripts/results-tables.mjs RUN_DIR");
  process.exit(2);
}
const bytes = readFileSync(join(dir, "report.json"));
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
/** p-values as the docs print them: two significant figures, scientific below 0.001. */
const p = (x) => {
  if (x === null || x === undefined) return "—";
  if (x >= 0.9995) return "1.0";
  return x < 0.001 ? x.toExponential(1).replace("e-", "e-") : x.toPrecision(2);
};
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
      : `${p(vb.primary_p)} (${p(vb.adjusted_p)})${sig(vb)} [${vb.discordant.join(", ")}]`;
  const controls = controlsOf(id)
    .map(([cid, c]) => {
      const va = c.vs_attack;
      const vs = va?.discordant
        ? `; ${p(va.primary_p)} (${p(va.adjusted_p)})${sig(va)} [${va.discordant.join(", ")}]`
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
console.log(out.join("\n"));
if (!byId.has("none")) console.error("note: the run has no `none` arm; the tests above are empty");
