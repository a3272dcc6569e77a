/** The mitigation section as text: one table for report.md and report.html, the same words. */
import type { Report } from "./build.js";
import { formatP, formatRate } from "./format.js";
import { diffText } from "./headline.js";
import { MITIGATION_HEADER } from "./mitigation.js";

export function mitigationRows(report: Report): string[][] {
  const m = report.mitigation;
  if (!m) return [];
  return report.run.arms.flatMap((arm) => {
    const a = m.arms[arm];
    if (!a) return [];
    return [
      [
        arm,
        a.role,
        String(a.pairs),
        formatRate(a.undefended_unsafe),
        formatRate(a.defended_unsafe),
        diffText(a.reduction),
        a.discordant ? `[${a.discordant[0]}, ${a.discordant[1]}]` : "—",
        a.reduction_p === null
          ? "—"
          : `${formatP(a.reduction_p)}${a.adjusted_p === null ? "" : ` (${formatP(a.adjusted_p)}${a.significant ? "*" : ""})`}`,
        formatRate(a.stopped),
        `${formatRate(a.undefended_task_success)} → ${formatRate(a.defended_task_success)}`,
      ],
    ];
  });
}

/** Sentences under the table: the defenses, the price, the stop rule, where latency is. */
export function mitigationNotes(report: Report): string[] {
  const m = report.mitigation;
  if (!m) return [];
  const notes = [
    `Defenses: ${m.defenses.map((d) => `\`${d}\``).join(", ")} (params: \`${JSON.stringify(m.params)}\`). Each arm ran undefended and defended on the same cells; pairs are the cells whose two episodes were both judged.`,
    `Test: one-sided exact McNemar for a reduction on the discordant pairs (prevented vs caused), Holm across treatment arms at ${m.test.alpha} (* significant); the interval is Newcombe's paired hybrid score interval for undefended minus defended.`,
    `Stops: ${m.stop_rule}.`,
  ];
  const calibrated = Object.values(report.calibration).filter((c) =>
    c.source.startsWith("calibration:"),
  ).length;
  if (calibrated > 0)
    // The params printed above are not what a calibrated task's defenses used: say so.
    notes.push(
      `Calibrated tasks (${calibrated} of ${report.run.tasks.length}) gave the defenses their calibrated keep-out zone in place of the suite's zones and, where the calibration file has one, their benign envelope in place of the params' \`envelope\`.`,
    );
  if (m.price)
    notes.push(
      `Price on \`${m.price.arm}\`: false stops ${formatRate(m.price.false_stop)}; task success lost (undefended − defended) ${diffText(m.price.task_success_cost)}.`,
    );
  notes.push(`Added latency per step: ${m.latency}.`);
  return notes;
}

export { MITIGATION_HEADER };
