/// <reference lib="dom" />
/**
 * The run page's episodes: filters kept in the URL (so a filtered view is a link), the table of
 * the matching episodes, 100 to a page.
 */
import { SHOWN_CELL_CHARS } from "../../rundir/names.js";
import type { EpisodeRow, RunPayload } from "../payloads.js";
import { type Child, h, table } from "./dom.js";
import { outcome } from "./widgets.js";

export interface Filters {
  unsafe: boolean;
  failed: boolean;
  errors: boolean;
  nd: boolean;
  unjudged: boolean;
  family: string;
  task: string;
  arm: string;
  scene: string;
  q: string;
  page: number;
}

const PAGE = 100;
const FLAGS = ["unsafe", "failed", "errors", "nd", "unjudged"] as const;
const CHOICES = ["family", "task", "arm", "scene", "q"] as const;

export function filtersFrom(p: URLSearchParams): Filters {
  return {
    unsafe: p.get("unsafe") === "1",
    failed: p.get("failed") === "1",
    errors: p.get("errors") === "1",
    nd: p.get("nd") === "1",
    unjudged: p.get("unjudged") === "1",
    family: p.get("family") ?? "",
    task: p.get("task") ?? "",
    arm: p.get("arm") ?? "",
    scene: p.get("scene") ?? "",
    q: p.get("q") ?? "",
    page: Number(p.get("page") ?? "0") || 0,
  };
}

export function filtersQuery(f: Filters): string {
  const p = new URLSearchParams();
  for (const k of FLAGS) if (f[k]) p.set(k, "1");
  for (const k of CHOICES) if (f[k]) p.set(k, f[k]);
  if (f.page > 0) p.set("page", String(f.page));
  const q = p.toString();
  return q ? `?${q}` : "";
}

function matches(e: EpisodeRow, f: Filters, family: Record<string, string>): boolean {
  if (f.unsafe && e.unsafe !== true) return false;
  if (f.failed && e.task_success !== false) return false;
  if (f.errors && e.error === null) return false;
  if (f.nd && e.delivered !== false) return false;
  if (f.unjudged && !(e.unsafe === null && e.error === null && !e.not_applicable)) return false;
  if (f.family && family[e.arm] !== f.family) return false;
  if (f.task && e.task !== f.task) return false;
  if (f.arm && e.arm !== f.arm) return false;
  if (f.scene && String(e.scene) !== f.scene) return false;
  if (f.q && !e.instruction.toLowerCase().includes(f.q.toLowerCase())) return false;
  return true;
}

function episodeRow(id: string, e: EpisodeRow): HTMLElement {
  return h(
    "tr",
    { class: "ep-row", "data-cell": e.cell },
    h(
      "td",
      {},
      h(
        "a",
        { href: `#/run/${id}/episode/${e.cell}`, class: "ep-link" },
        e.cell.slice(0, SHOWN_CELL_CHARS),
      ),
    ),
    h("td", {}, e.task),
    h("td", {}, e.arm),
    h("td", { class: "num" }, e.seed),
    h("td", { class: "num" }, e.scene),
    h("td", {}, outcome(e.unsafe, e.error, e.not_applicable)),
    h("td", { class: "num" }, e.first_unsafe_step ?? "—"),
    h("td", {}, e.task_success === null ? "—" : e.task_success ? "yes" : "no"),
    h(
      "td",
      {},
      e.delivered === null ? "—" : e.delivered ? "yes" : h("span", { class: "badge warn" }, "no"),
    ),
    h("td", { class: "small" }, e.instruction),
  );
}

/** The filters, the count, the table and the pager of a run's episodes. */
export function episodesSection(
  id: string,
  data: RunPayload & { report: NonNullable<RunPayload["report"]> },
  f: Filters,
): Child[] {
  const report = data.report;
  const family: Record<string, string> = Object.fromEntries(
    Object.entries(report.arms).map(([a, x]) => [a, x.family]),
  );
  const go = (next: Partial<Filters>) => {
    location.hash = `#/run/${id}${filtersQuery({ ...f, page: 0, ...next })}`;
  };
  const check = (key: (typeof FLAGS)[number], label: string) =>
    h(
      "label",
      {},
      h("input", {
        type: "checkbox",
        id: `f-${key}`,
        checked: f[key],
        onchange: (e: Event) => go({ [key]: (e.target as HTMLInputElement).checked }),
      }),
      ` ${label}`,
    );
  const select = (key: "family" | "task" | "arm" | "scene", label: string, values: string[]) =>
    h(
      "label",
      {},
      `${label} `,
      h(
        "select",
        {
          id: `f-${key}`,
          onchange: (e: Event) => go({ [key]: (e.target as HTMLSelectElement).value }),
        },
        h("option", { value: "" }, "all"),
        ...values.map((v) => h("option", { value: v, selected: f[key] === v }, v)),
      ),
    );
  const scenes = [...new Set(data.episodes.map((e) => e.scene))].sort((a, b) => a - b).map(String);
  const search = h("input", {
    type: "search",
    id: "f-q",
    placeholder: "search instructions",
    value: f.q,
  });
  search.addEventListener("change", () => go({ q: search.value }));
  const shown = data.episodes.filter((e) => matches(e, f, family));
  const slice = shown.slice(f.page * PAGE, (f.page + 1) * PAGE);
  const pages = Math.ceil(shown.length / PAGE);
  return [
    h("h2", {}, "Episodes"),
    h(
      "div",
      { class: "filters" },
      check("unsafe", "unsafe only"),
      check("failed", "task failed"),
      check("errors", "errors"),
      check("nd", "not delivered"),
      check("unjudged", "unjudged"),
      select("family", "family", [...new Set(Object.values(family))].sort()),
      select("task", "task", report.run.tasks),
      select("arm", "arm", report.run.arms),
      select("scene", "scene", scenes),
      search,
    ),
    h(
      "p",
      { class: "small muted", id: "count" },
      `${shown.length} of ${data.episodes.length} episodes match`,
    ),
    table(
      { id: "episodes" },
      [
        "episode",
        "task",
        "arm",
        "seed",
        "scene",
        "outcome",
        "first unsafe step",
        "task success",
        "delivered",
        "received instruction",
      ],
      slice.map((e) => episodeRow(id, e)),
    ),
    pages > 1
      ? h(
          "p",
          {},
          f.page > 0 ? h("button", { onclick: () => go({ page: f.page - 1 }) }, "previous") : null,
          ` page ${f.page + 1} of ${pages} `,
          f.page + 1 < pages
            ? h("button", { id: "next-page", onclick: () => go({ page: f.page + 1 }) }, "next")
            : null,
        )
      : null,
  ];
}
