/**
 * The atoms every surface prints a run with: rates, intervals, p-values and the order of the
 * arms. The terminal, report.md, report.html, SARIF messages and the viewer all call these, so a
 * number reads the same wherever it is shown. Browser-safe: type imports only (the viewer's
 * client bundles this file).
 */
import type { Rate, Report } from "./build.js";

/** "12.5%" or "N/A" when the rate has no denominator. */
export function pct(value: number | null | undefined): string {
  return value === null || value === undefined ? "N/A" : `${(value * 100).toFixed(1)}%`;
}

/** The Predicates table's calibration columns, shown only when a task of the run is calibrated. */
export const CALIBRATION_COLUMNS = [
  "target FP rate",
  "measured FP rate (held out)",
  "scenes in-sample",
] as const;

/** A task's calibration columns ("—" for an uncalibrated task); null when no task is calibrated. */
export function calibrationCells(
  report: Pick<Report, "calibration" | "run">,
): ((task: string) => string[]) | null {
  if (!report.run.tasks.some((t) => report.calibration[t]?.target_fpr !== undefined)) return null;
  return (task) => {
    const c = report.calibration[task];
    if (!c || c.target_fpr === undefined) return ["—", "—", "—"];
    return [
      pct(c.target_fpr),
      c.measured_fpr ? formatRate(c.measured_fpr) : "—",
      c.overlap ? `${c.overlap.scenes}/${c.overlap.of}` : "—",
    ];
  };
}

/** "3/10 = 30.0% [10.8–60.3%]" */
export function formatRate(r: Rate | null | undefined): string {
  if (!r || r.rate === null || r.interval === null) return "N/A (n = 0)";
  return `${r.successes}/${r.n} = ${pct(r.rate)} [${pct(r.interval.low).replace("%", "")}–${pct(r.interval.high)}]`;
}

/**
 * A p-value: three decimals, "<0.001" below that, "—" when there is none. One format for every
 * surface; report.json keeps the exact value.
 */
export function formatP(p: number | null | undefined): string {
  if (p === null || p === undefined) return "—";
  return p < 0.001 ? "<0.001" : p.toFixed(3);
}

/** A p-value in a sentence, after its name: "p < 0.001", "p = 0.012". */
export function pIs(name: string, p: number | null | undefined): string {
  const f = formatP(p);
  return f.startsWith("<") ? `${name} < ${f.slice(1)}` : `${name} = ${f}`;
}

/** Why an attack-control test has no p: said the same in report.md and report.html. */
export const NO_PINNED_PAIR = "no pinned pair judged in both arms";

/** What `displayOrder` reads of a report (report.json, or the viewer's payload of it). */
export interface ArmsOf {
  run: { arms: readonly string[] };
  arms: Record<string, { role: string; matches?: string | null | undefined } | undefined>;
}

/**
 * Arms in display order: the baseline first, then each treatment followed by the controls that
 * match it, then controls whose attack is not in the run.
 */
export function displayOrder(report: ArmsOf): string[] {
  const arms = report.run.arms;
  const role = (a: string) => report.arms[a]?.role;
  const out: string[] = arms.filter((a) => role(a) === "baseline");
  for (const a of arms.filter((x) => role(x) === "treatment")) {
    out.push(a);
    for (const c of arms) if (role(c) === "control" && report.arms[c]?.matches === a) out.push(c);
  }
  for (const a of arms) if (!out.includes(a)) out.push(a);
  return out;
}

/** The headline's warnings for waived scene checks, one sentence each (empty when none). */
export function waiverLines(report: {
  run: { waivers?: readonly string[] | undefined };
}): string[] {
  return (report.run.waivers ?? []).map((w) =>
    w === "calibration-overlap"
      ? "Scored on scenes its calibration was fitted or thresholded on (--allow-calibration-overlap): the benign floor is not held out."
      : w === "training-scenes"
        ? "Scored on scenes the policy was trained on (--allow-training-scenes): rates describe training scenes, not new ones."
        : `Waived: ${w}.`,
  );
}

/** A plain-text table: columns padded to their widest cell, a rule under the header. */
export function textTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "─".repeat(w))), ...rows.map(line)].join("\n");
}

/** One table of the split by a task field: rows the field's values, columns the arms. */
export interface TaskFieldTable {
  /** "category, unsafe" */
  title: string;
  field: string;
  metric: "unsafe" | "task_success";
  /** The field's name, then the arms in display order. */
  header: string[];
  /** Each value of the field with its rate per arm. */
  rows: { value: string; rates: Rate[] }[];
}

/**
 * The arms' rates split by each task field the benchmark sent (LIBERO-Plus's perturbation
 * category and difficulty level): per field, an unsafe table and a task-success table. Empty when
 * the report has no split (every run whose episodes carry no such field).
 */
export function taskFieldTables(report: Pick<Report, "by_task_field"> & ArmsOf): TaskFieldTable[] {
  const split = report.by_task_field;
  if (split === undefined) return [];
  const arms = displayOrder(report);
  const none: Rate = { successes: 0, n: 0, rate: null, interval: null };
  return Object.keys(split)
    .sort()
    .flatMap((field) =>
      (["unsafe", "task_success"] as const).map((metric) => ({
        title: `${field}, ${metric === "unsafe" ? "unsafe" : "task success"}`,
        field,
        metric,
        header: [field, ...arms],
        rows: Object.keys(split[field] ?? {})
          .sort()
          .map((value) => ({
            value,
            rates: arms.map((a) => split[field]?.[value]?.[a]?.[metric] ?? none),
          })),
      })),
    );
}
