/// <reference lib="dom" />
/** The runs page: every run with its headline rates; two can be picked and compared. */
import type { RunSummary } from "../payloads.js";
import { app, crumbs, fail, h, table } from "./dom.js";
import type { View } from "./router.js";
import { rateText, stateBadge } from "./widgets.js";

export async function runsPage(v: View): Promise<void> {
  crumbs(["runs", null]);
  let runs: RunSummary[];
  try {
    runs = await v.source.runs();
  } catch (e) {
    return fail(e);
  }
  if (!v.current()) return;
  const picked: string[] = [];
  const compareBtn = h(
    "button",
    {
      id: "compare-btn",
      disabled: true,
      onclick: () => {
        if (picked.length === 2) location.hash = `#/compare/${picked[0]}/${picked[1]}`;
      },
    },
    "compare the two picked runs",
  );
  const pick = (r: RunSummary) =>
    h("input", {
      type: "checkbox",
      class: "pick",
      "data-run": r.id,
      disabled: r.state === "broken",
      onchange: (e: Event) => {
        const on = (e.target as HTMLInputElement).checked;
        const i = picked.indexOf(r.id);
        if (on && i < 0) picked.push(r.id);
        if (!on && i >= 0) picked.splice(i, 1);
        while (picked.length > 2) {
          const gone = picked.shift() as string;
          const other = document.querySelector<HTMLInputElement>(`input.pick[data-run="${gone}"]`);
          if (other) other.checked = false;
        }
        compareBtn.disabled = picked.length !== 2;
      },
    });
  const rows = runs.map((r) => runRow(r, pick(r)));
  app().replaceChildren(
    h("h1", {}, `Runs (${runs.length})`),
    h(
      "p",
      { class: "muted" },
      "Rates are unsafe episodes over judged episodes with 95% Wilson intervals. Pick two runs of the same plan to compare them.",
    ),
    h("p", {}, compareBtn),
    table(
      { id: "runs" },
      [
        "",
        "run",
        "state",
        "policy",
        "suite",
        "protocol",
        "arms",
        "attack success (treatment)",
        "benign floor",
        "controls",
        "episodes",
        "finished",
        "digest",
      ],
      rows,
    ),
  );
  if (runs.some((r) => r.state === "in-progress")) v.again(() => void runsPage(v));
}

function runRow(r: RunSummary, box: HTMLElement): HTMLElement {
  const hl = r.headline;
  const progress =
    r.state === "in-progress" && r.planned
      ? h(
          "div",
          { class: "progress", title: `${r.episodes}/${r.planned}` },
          (() => {
            const d = h("div");
            d.style.width = `${(100 * r.episodes) / r.planned}%`;
            return d;
          })(),
        )
      : null;
  return h(
    "tr",
    { "data-run": r.id, class: "run-row" },
    h("td", {}, box),
    h(
      "td",
      {},
      r.state === "broken"
        ? r.label
        : h("a", { href: `#/run/${r.id}`, class: "run-link" }, r.label),
    ),
    h(
      "td",
      {},
      stateBadge(r),
      r.partial ? h("span", { class: "badge partial" }, " partial") : null,
    ),
    h("td", {}, r.policy ?? "—"),
    h("td", {}, r.suite ?? "—"),
    h("td", { class: "small" }, r.protocol ?? "—"),
    h("td", { class: "small" }, r.arms.join(", ")),
    h(
      "td",
      {},
      hl
        ? rateText(hl.treatment_unsafe)
        : r.problem
          ? h("span", { class: "error small" }, r.problem)
          : "—",
    ),
    h("td", {}, hl ? rateText(hl.baseline_unsafe) : "—"),
    h("td", {}, hl ? rateText(hl.control_unsafe) : "—"),
    h(
      "td",
      { class: "num" },
      `${r.episodes}${r.planned && r.planned !== r.episodes ? `/${r.planned}` : ""}`,
      progress,
    ),
    h("td", { class: "small" }, r.finished_at ? r.finished_at.replace("T", " ").slice(0, 19) : "—"),
    h("td", { class: "small", title: r.digest ?? "" }, r.digest ? r.digest.slice(7, 19) : "—"),
  );
}
