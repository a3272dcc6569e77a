/**
 * The run as the terminal prints it, built only from report.json: the plan header, the arms
 * table, the summary lines, the verdict and what to do next. `attack`, `bridge` and `merge` print
 * these same lines; the atoms (rates, p-values, arm order) come from format.ts as on every surface.
 */
import { join } from "node:path";
import type { Report } from "./build.js";
import { caveats, type Via } from "./caveats.js";
import {
  displayOrder,
  formatP,
  formatRate,
  taskFieldTables,
  textTable,
  waiverLines,
} from "./format.js";
import { firedText, headlineNotes, notApplicableLines } from "./headline.js";
import { procedureName } from "./significance.js";
import type { Verdict } from "./verdict.js";

/** The arms table printed at the end of a run. */
export function armsTable(report: Report): string {
  const rows = displayOrder(report).map((name) => {
    const a = report.arms[name];
    if (!a) return [name];
    const na = a.episodes - a.not_applicable === 0;
    return [
      a.role === "control" ? `  ${name}` : name,
      a.role,
      na ? "N/A" : formatRate(a.unsafe),
      na ? "N/A" : formatRate(a.task_success),
      String(a.errors),
      a.vs_baseline?.adjusted_p == null
        ? "—"
        : `${formatP(a.vs_baseline.adjusted_p)}${a.vs_baseline.significant ? " *" : ""}`,
      na ? (a.not_applicable_reason ?? "requirements unmet") : firedText(a),
    ];
  });
  const rule = report.summary.significance;
  const table = textTable(
    [
      "arm",
      "role",
      "unsafe (95% Wilson)",
      "task success",
      "errors",
      "adjusted p",
      "predicates fired",
    ],
    rows,
  );
  return rule === null
    ? table
    : `${table}\nadjusted p: one-sided exact McNemar on pinned pairs, ${procedureName(rule.multiplicity)} across treatment arms; * significant at ${rule.alpha}`;
}

/**
 * The arms' rates split by the benchmark's task fields (LIBERO-Plus's perturbation category and
 * level), printed under the arms table; empty when the report has no split.
 */
export function taskFieldText(report: Report): string {
  return taskFieldTables(report)
    .map((t) =>
      [
        `by ${t.title} (95% Wilson):`,
        textTable(
          t.header,
          t.rows.map((r) => [r.value, ...r.rates.map(formatRate)]),
        ),
      ].join("\n"),
    )
    .join("\n\n");
}

/** The arms table, then the split by task field where the report has one. */
export function armsAndSplits(report: Report): string {
  const split = taskFieldText(report);
  return split === "" ? armsTable(report) : `${armsTable(report)}\n\n${split}`;
}

/** What was actually run (or will be, for --dry-run): the lines above the arms table. */
export function planHeader(
  r: Pick<Report["run"], "policy" | "suite" | "tasks" | "arms" | "seed" | "seeds" | "repeats"> & {
    shard?: string | null;
  },
  episodes: number,
): string {
  const seeds = r.seeds === 1 ? `seed ${r.seed}` : `seeds ${r.seed}–${r.seed + r.seeds - 1}`;
  return [
    `${r.policy} on ${r.suite}${r.shard ? ` (shard ${r.shard})` : ""}: ${r.tasks.length} task(s) × ${r.arms.length} arm(s) × ${r.seeds} seed(s) × ${r.repeats} repeat(s) = ${episodes} episodes`,
    `tasks: ${r.tasks.join(", ")}`,
    `${seeds}; arms: ${r.arms.join(", ")}`,
  ].join("\n");
}

/** The caveats block as the terminal prints it (empty when the run has none). */
export function caveatLines(report: Report, options: { via?: Via; dir?: string } = {}): string[] {
  const list = caveats(report, options);
  return list.length === 0 ? [] : ["caveats:", ...list.map((c) => `  - ${c.text}`)];
}

/** The lines under the arms table: warnings, notes, the four headline rates and the caveats. */
export function summaryLines(report: Report, options: { via?: Via; dir?: string } = {}): string[] {
  const s = report.summary;
  return [
    ...waiverLines(report).map((l) => `warning: ${l}`),
    ...headlineNotes(report).map((n) => `note: ${n}`),
    ...notApplicableLines(report),
    `attack success (treatment): ${formatRate(s.treatment_unsafe)}`,
    `benign floor (none):        ${formatRate(s.baseline_unsafe)}`,
    `controls:                   ${formatRate(s.control_unsafe)}`,
    `clean task success:         ${formatRate(s.clean_task_success)}`,
    ...caveatLines(report, options),
  ];
}

/** The run, as printed when it finishes: header, arms table and summary. */
export function runText(report: Report, options: { via?: Via; dir?: string } = {}): string {
  return `${planHeader(report.run, report.episodes.length)}\n\n${armsAndSplits(report)}\n\n${summaryLines(report, options).join("\n")}`;
}

/** An acceptance protocol's verdict with one line per criterion. */
export function verdictLines(v: Verdict): string {
  const lines = [`verdict: ${v.verdict.toUpperCase()} under acceptance protocol '${v.protocol}'`];
  for (const c of v.criteria) lines.push(`  ${c.status.padEnd(10)} ${c.criterion}: ${c.reason}`);
  return lines.join("\n");
}

/** Arms that played episodes, every one of which errored: the run measured nothing there. */
export function erroredArms(report: Report): string[] {
  return report.run.arms.filter((a) => {
    const arm = report.arms[a];
    return (
      arm !== undefined &&
      arm.episodes > arm.not_applicable &&
      arm.errors === arm.episodes - arm.not_applicable
    );
  });
}

/** What to do after a run: the pages to open and the next command. */
export function nextSteps(out: string, html: boolean, calibrate: string | null): string[] {
  return [
    "",
    "next:",
    html
      ? `  open ${join(out, "report.html")} (headline, the showcased episode and its benign twin, per-task heatmap)`
      : `  read ${join(out, "report.md")}`,
    `  every episode beside its benign twin, frame by frame: provael view ${out}`,
    // Given only where it can work on this run (runner/calibration-plan.ts decides).
    ...(calibrate === null
      ? []
      : [`  fit keep-out zones on benign rollouts, then pass --calib: ${calibrate}`]),
    "  other attacks and what each requires: provael list-attacks",
  ];
}
