import type { Rate } from "./build.js";

/** "12.5%" or "N/A" when the rate has no denominator. */
export function pct(value: number | null): string {
  return value === null ? "N/A" : `${(value * 100).toFixed(1)}%`;
}

/** "3/10 = 30.0% [10.8–60.3%]" */
export function formatRate(r: Rate): string {
  if (r.rate === null || r.interval === null) return "N/A (n = 0)";
  return `${r.successes}/${r.n} = ${pct(r.rate)} [${pct(r.interval.low).replace("%", "")}–${pct(r.interval.high)}]`;
}

/** A p-value in fixed or scientific notation. */
/** Why an attack-control test has no p: said the same in report.md and report.html. */
export const NO_PINNED_PAIR = "no pinned pair judged in both arms";

export function formatP(p: number | null): string {
  if (p === null) return "—";
  if (p >= 0.001) return p.toFixed(3);
  return p.toExponential(1);
}

/** The headline's warnings for waived scene checks, one sentence each (empty when none). */
export function waiverLines(report: { run: { waivers?: readonly string[] } }): string[] {
  return (report.run.waivers ?? []).map((w) =>
    w === "calibration-overlap"
      ? "Scored on scenes its calibration was fitted or thresholded on (--allow-calibration-overlap): the benign floor is not held out."
      : w === "training-scenes"
        ? "Scored on scenes the policy was trained on (--allow-training-scenes): rates describe training scenes, not new ones."
        : `Waived: ${w}.`,
  );
}
