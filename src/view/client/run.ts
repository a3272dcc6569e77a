/// <reference lib="dom" />
/**
 * A run's page: its five headline numbers, its caveats (report/caveats.ts, as every surface
 * prints them), defenses, the arms and heat map (./arms.ts), then its episodes (./episodes.ts).
 */

import { pct } from "../../report/format.js";
import type { Rate, RunPayload } from "../payloads.js";
import { armsTable, heatMap, ruleText } from "./arms.js";
import { app, type Child, crumbs, fail, h } from "./dom.js";
import { episodesSection, filtersFrom, filtersQuery } from "./episodes.js";
import { POLL_MS, type View } from "./router.js";
import { rateText, stateBadge } from "./widgets.js";

const card = (label: string, r: Rate, id: string) =>
  h(
    "div",
    { class: "card", id },
    h("div", { class: "label" }, label),
    h("div", { class: "value" }, pct(r.rate)),
    h("div", { class: "small muted" }, rateText(r)),
  );

function defensesText(report: NonNullable<RunPayload["report"]>): string {
  const def = report.run.defenses;
  if (!def) return "none";
  return `${def.ids.join(", ")}${def.compare ? " (every cell also played undefended: see the mitigation section of report.md)" : ""}${def.never_adaptive.length > 0 ? `; never attacked adaptively in this run: ${def.never_adaptive.join(", ")}` : ""}`;
}

export async function runPage(v: View, id: string, params: URLSearchParams): Promise<void> {
  let data: RunPayload;
  try {
    data = await v.source.run(id);
  } catch (e) {
    return fail(e);
  }
  if (!v.current()) return;
  const { summary, report } = data;
  crumbs(["runs", "#/"], [summary.label, null]);
  const page: Child[] = [
    h(
      "h1",
      {},
      summary.label,
      " ",
      stateBadge(summary),
      summary.partial
        ? h("span", { class: "badge partial", id: "partial" }, "partial: rates so far")
        : null,
    ),
    h(
      "p",
      { class: "muted" },
      `${summary.policy ?? "?"} on ${summary.suite ?? "?"} · ${summary.protocol ?? ""} · ${summary.episodes}${summary.planned && summary.planned !== summary.episodes ? ` of ${summary.planned}` : ""} episodes${summary.digest ? ` · ${summary.digest.slice(0, 19)}…` : ""}`,
    ),
  ];
  if (summary.state === "in-progress")
    page.push(
      h(
        "div",
        { class: "notice", id: "live" },
        v.source.live
          ? `Live: the journal is read again every ${POLL_MS / 1000} s. ${summary.episodes}/${summary.planned ?? "?"} episodes so far.`
          : `In progress: ${summary.episodes}/${summary.planned ?? "?"} episodes journalled when these files were read.`,
      ),
    );
  if (!report) {
    page.push(h("p", { class: "error" }, summary.problem ?? "no report"));
    app().replaceChildren(...(page.filter(Boolean) as Node[]));
    return;
  }
  const sm = report.summary;
  page.push(
    h(
      "div",
      { class: "cards" },
      card("attack success (treatment arms)", sm.treatment_unsafe, "h-treatment"),
      card("benign floor (none)", sm.baseline_unsafe, "h-floor"),
      card("controls", sm.control_unsafe, "h-controls"),
      card("clean task success", sm.clean_task_success, "h-clean"),
      card("succeeded but unsafe", sm.succ_but_unsafe, "h-sbu"),
    ),
  );
  if (data.caveats.length > 0)
    page.push(
      h(
        "div",
        { class: "notice", id: "caveats" },
        h("b", {}, "Caveats"),
        h("ul", {}, ...data.caveats.map((c) => h("li", {}, c))),
      ),
    );
  page.push(
    h("p", { class: "small", id: "defenses" }, h("b", {}, "Defenses: "), defensesText(report)),
  );
  page.push(h("h2", {}, "Arms"));
  const rule = ruleText(report);
  if (rule) page.push(h("p", { class: "small muted" }, rule));
  page.push(
    armsTable(
      report,
      (arm) => `#/run/${id}${filtersQuery({ ...filtersFrom(new URLSearchParams()), arm })}`,
    ),
  );
  page.push(h("h2", {}, "Unsafe rate per task"), heatMap(report));
  page.push(...episodesSection(id, { ...data, report }, filtersFrom(params)));
  app().replaceChildren(...(page.filter(Boolean) as Node[]));
  // Which filters the page now shows: a test (or a script) waits on it, not on row counts.
  app().dataset.route = location.hash;
  if (summary.state === "in-progress") v.again(() => void runPage(v, id, params));
}
