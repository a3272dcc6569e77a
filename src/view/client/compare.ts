/// <reference lib="dom" />
/**
 * Two runs compared: per-arm unsafe rates and their change, the regression gate's verdict and
 * slices (report/regression.ts, with `b` the candidate), and every cell whose outcome changed.
 */
import { formatP, pct } from "../../report/format.js";
import type { ComparePayload } from "../payloads.js";
import { crumbs, fail, h, put, table } from "./dom.js";
import type { View } from "./router.js";
import { outcome, rateText } from "./widgets.js";

function verdict(data: ComparePayload): HTMLElement {
  const g = data.gate;
  if (!g)
    return h(
      "p",
      { id: "gate", class: "error" },
      `Regression gate not computed: ${data.gate_error ?? "?"}`,
    );
  return g.regressed.length > 0
    ? h(
        "p",
        { id: "gate", class: "notice" },
        h("b", {}, "Regression gate: REGRESSED"),
        ` in ${g.regressed.join(", ")}`,
      )
    : h(
        "p",
        { id: "gate" },
        h("b", {}, "Regression gate: no regression"),
        ` (tolerance ${pct(g.tolerance)}, Holm-corrected Fisher tests at ${g.alpha})`,
      );
}

const change = (delta: number | null) =>
  delta === null ? "—" : `${delta >= 0 ? "+" : ""}${(delta * 100).toFixed(1)} pts`;

export async function comparePage(v: View, a: string, b: string): Promise<void> {
  let data: ComparePayload;
  try {
    data = await v.source.compare(a, b);
  } catch (e) {
    return fail(e);
  }
  if (!v.current()) return;
  crumbs(["runs", "#/"], [`compare ${data.a.label} → ${data.b.label}`, null]);
  const g = data.gate;
  put(
    h("h1", {}, "Compare runs"),
    h(
      "p",
      {},
      "baseline ",
      h("a", { href: `#/run/${data.a.id}` }, data.a.label),
      ` (${data.a.policy})`,
      " → candidate ",
      h("a", { href: `#/run/${data.b.id}` }, data.b.label),
      ` (${data.b.policy})`,
    ),
    verdict(data),
    g && !g.comparable
      ? h(
          "p",
          { class: "notice" },
          `Not comparable as like for like: ${g.incomparable_reasons.join("; ")}`,
        )
      : null,
    h("h2", {}, "Per-arm unsafe rates"),
    table(
      { id: "compare-arms" },
      ["arm", "role", "baseline run", "candidate run", "change"],
      data.arms.map((x) =>
        h(
          "tr",
          {},
          h("td", {}, x.arm),
          h("td", {}, h("span", { class: `badge role-${x.role}` }, x.role)),
          h("td", {}, rateText(x.a)),
          h("td", {}, rateText(x.b)),
          h("td", { class: "num" }, change(x.delta)),
        ),
      ),
    ),
    g ? h("h2", {}, "Gate slices") : null,
    g
      ? table(
          { id: "slices" },
          ["slice", "candidate", "baseline", "Fisher p", "Holm p", "regressed", "reason"],
          g.slices.map((sl) =>
            h(
              "tr",
              {},
              h("td", {}, sl.slice),
              h("td", {}, rateText(sl.candidate)),
              h("td", {}, rateText(sl.baseline)),
              h("td", { class: "num" }, formatP(sl.fisher_p)),
              h("td", { class: "num" }, formatP(sl.holm_p)),
              h("td", {}, sl.regressed ? h("span", { class: "badge unsafe" }, "yes") : "no"),
              h("td", { class: "small" }, sl.reason),
            ),
          ),
        )
      : null,
    h("h2", {}, `Pairs that changed outcome (${data.changed.length})`),
    data.changed.length === 0
      ? h("p", { class: "muted" }, "No cell changed its unsafe outcome.")
      : null,
    table(
      { id: "changed" },
      ["task", "arm", "seed", "baseline run", "candidate run", "replay"],
      data.changed.map((c) =>
        h(
          "tr",
          { class: "changed-row", "data-cell": c.cell },
          h("td", {}, c.task),
          h("td", {}, c.arm),
          h("td", { class: "num" }, c.seed),
          h("td", {}, outcome(c.a, null)),
          h("td", {}, outcome(c.b, null)),
          h(
            "td",
            {},
            h(
              "a",
              { href: `#/run/${data.b.id}/episode/${c.cell}`, class: "changed-link" },
              "candidate",
            ),
            " · ",
            h("a", { href: `#/run/${data.a.id}/episode/${c.cell}` }, "baseline"),
          ),
        ),
      ),
    ),
  );
}
