/// <reference lib="dom" />
/**
 * The run page's arms: the table (each treatment followed by its matched controls, in the one
 * display order of report/format.ts) and the unsafe rate per task and arm as a heat map.
 */
import { displayOrder, formatP, pct } from "../../report/format.js";
import { firedText } from "../../report/headline.js";
import { procedureName } from "../../report/significance.js";
import type { ReportHead } from "../payloads.js";
import { h, table } from "./dom.js";
import { rateBar, rateText } from "./widgets.js";

type Arm = ReportHead["arms"][string];

/** Whether an arm is shown under the treatment it controls for. */
const under = (report: ReportHead, a: Arm | undefined) =>
  a?.role === "control" && a.matches != null && report.run.arms.includes(a.matches);

function budgetText(a: Arm): string {
  const b = a.budget_use;
  if (!b) return "—";
  return `${b.kind}: mean ${b.used_mean.toFixed(1)}, max ${b.used_max}${b.limit !== null ? ` of ${b.limit}` : ""}`;
}

/** The significance rule's sentence, above the table. */
export function ruleText(report: ReportHead): string | null {
  const rule = report.summary.significance;
  if (!rule) return null;
  return `Significance: one-sided exact McNemar on pinned pairs against the benign arm, ${procedureName(rule.multiplicity)} across ${rule.tested} treatment arm(s), alpha ${rule.alpha}.`;
}

/** The arms table; `armLink` is the episodes of one arm. */
export function armsTable(report: ReportHead, armLink: (arm: string) => string): HTMLElement {
  const rows = displayOrder(report).map((arm) => {
    const a = report.arms[arm];
    if (!a) return null;
    const vs = a.vs_baseline;
    return h(
      "tr",
      { class: under(report, a) ? "sub" : "", "data-arm": arm },
      h("td", {}, h("a", { href: armLink(arm) }, arm)),
      h(
        "td",
        {},
        h("span", { class: `badge role-${a.role}` }, a.role),
        a.matches ? h("span", { class: "small muted" }, ` controls ${a.matches}`) : null,
      ),
      h("td", {}, a.family),
      h("td", {}, rateText(a.unsafe), rateBar(a.unsafe)),
      h("td", {}, rateText(a.task_success)),
      h("td", { class: "num" }, vs ? formatP(vs.adjusted_p) : "—", vs?.significant ? " *" : ""),
      h("td", { class: "num" }, vs?.discordant ? `${vs.discordant[0]}/${vs.discordant[1]}` : "—"),
      h(
        "td",
        { class: "num" },
        `${a.errors}`,
        a.not_delivered > 0
          ? h("span", { class: "badge warn" }, ` ${a.not_delivered} not delivered`)
          : null,
      ),
      h("td", { class: "small" }, budgetText(a)),
      h("td", { class: "small" }, a.not_applicable_reason ?? firedText(a)),
    );
  });
  return table(
    { id: "arms" },
    [
      "arm",
      "role",
      "family",
      "unsafe (95% Wilson)",
      "task success",
      "adjusted p",
      "discordant b/c",
      "errors",
      "budget use",
      "predicates fired / N/A",
    ],
    rows,
  );
}

/** Unsafe rate per task (rows) and arm (columns, in display order). */
export function heatMap(report: ReportHead): HTMLElement {
  const arms = displayOrder(report);
  return h(
    "table",
    { class: "heat", id: "heat" },
    h("thead", {}, h("tr", {}, h("th", {}, "task"), ...arms.map((a) => h("th", {}, a)))),
    h(
      "tbody",
      {},
      report.run.tasks.map((t) =>
        h(
          "tr",
          {},
          h("td", {}, t),
          ...arms.map((a) => {
            const r = report.by_task[t]?.[a];
            const td = h("td", { class: "cell", title: rateText(r) }, pct(r?.rate));
            if (r?.rate !== null && r?.rate !== undefined) {
              td.style.background = `rgba(198,40,40,${(0.08 + 0.8 * r.rate).toFixed(2)})`;
              if (r.rate > 0.55) td.style.color = "#fff";
            }
            return td;
          }),
        ),
      ),
    ),
  );
}
