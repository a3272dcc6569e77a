/**
 * Sentences every report format puts in its headline, built only from report.json: when the
 * benign floor is above the attacks, defenses never measured against an adaptive attack, and the
 * defenses' price (the run's caveats are in caveats.ts). The CLI,
 * report.md and report.html print the same words.
 */
import type { ArmReport, Report } from "./build.js";
import { formatRate, pct } from "./format.js";

/** True when the baseline arm was unsafe more often than the attacks taken together. */
export function floorExceedsAttacks(report: Report): boolean {
  const floor = report.summary.baseline_unsafe.rate;
  const attacks = report.summary.treatment_unsafe.rate;
  return floor !== null && attacks !== null && floor > attacks;
}

/** Which predicates fired in an arm, e.g. "physical_hazard 5 (3 after success)". */
export function firedText(arm: ArmReport): string {
  const parts = Object.entries(arm.fired).map(
    ([id, f]) =>
      `${id} ${f.episodes}${f.after_success > 0 ? ` (${f.after_success} after success)` : ""}`,
  );
  return parts.length === 0 ? "—" : parts.join(", ");
}

/** The plain sentences that belong above any table of the run. */
export function headlineNotes(report: Report): string[] {
  const notes: string[] = [];
  if (floorExceedsAttacks(report)) {
    const base = report.tests.baseline_arm;
    const arm = base === null ? undefined : report.arms[base];
    const fired = arm ? firedText(arm) : "—";
    notes.push(
      `The benign floor (${pct(report.summary.baseline_unsafe.rate)}) is above the attacks (${pct(report.summary.treatment_unsafe.rate)}): the unsafe episodes in this run come from the policy's own behaviour, not from any attack${fired === "—" ? "" : ` (baseline predicates: ${fired})`}.`,
    );
  }
  const d = report.run.defenses;
  if (d && d.never_adaptive.length > 0) {
    notes.push(
      `Never measured against an adaptive attack: ${d.never_adaptive.join(", ")}. No arm of this run knew ${d.never_adaptive.length === 1 ? "this defense" : "these defenses"} (\`adaptiveTo\`); a defense that holds against attacks that do not know it can still fall to one that does.`,
    );
  }
  const m = report.mitigation;
  if (
    m?.price &&
    (m.price.false_stop.successes > 0 || (m.price.task_success_cost?.estimate ?? 0) > 0)
  ) {
    notes.push(
      `The defenses' price on ${m.price.arm}: false stops ${formatRate(m.price.false_stop)}; task success lost ${diffText(m.price.task_success_cost)}.`,
    );
  }
  return notes;
}

/** "+25.0 pp [3.1, 44.6]" for a paired difference (percentage points), "—" when none. */
export function diffText(d: { estimate: number | null; low: number; high: number } | null): string {
  if (!d || d.estimate === null) return "—";
  const pp = (v: number) => `${v >= 0 ? "+" : ""}${(v * 100).toFixed(1)}`;
  return `${pp(d.estimate)} pp [${pp(d.low)}, ${pp(d.high)}]`;
}

/** N/A arms and why, e.g. "mcp_tool_desc: needs a policy that reads a context channel …". */
export function notApplicableLines(report: Report): string[] {
  return report.run.arms.flatMap((a) => {
    const arm = report.arms[a];
    if (!arm || arm.episodes === 0 || arm.episodes - arm.not_applicable > 0) return [];
    return [`${a}: N/A, ${arm.not_applicable_reason ?? "its requirements are unmet"}`];
  });
}
