/// <reference lib="dom" />
/**
 * The viewer's browser app: four pages (runs, run, episode, compare) routed by the URL's hash, so
 * every view has a link. It reads the JSON answers of src/view/api.ts: from the server (`api/…`)
 * or, in a static bundle, from `data/…js` files that each hand one answer to `provaelData`
 * (file:// refuses fetch). Everything is built with DOM calls and textContent: no HTML from data.
 */
import type {
  ComparePayload,
  EpisodePayload,
  EpisodeRecordPayload,
  EpisodeRow,
  FramesPayload,
  Rate,
  RunPayload,
  RunSummary,
} from "../payloads.js";

declare global {
  interface Window {
    PROVAEL: { mode: "server" | "bundle"; version: string };
    provaelData?: (key: string, value: unknown) => void;
  }
}

const MODE = window.PROVAEL.mode;
const POLL_MS = 2000;

// ----------------------------------------------------------------------------------------------
// Loading

const waiting = new Map<string, { ok: (v: unknown) => void; fail: (e: Error) => void }>();
window.provaelData = (key, value) => {
  const w = waiting.get(key);
  if (w) {
    waiting.delete(key);
    w.ok(value);
  }
};

/** One API answer; in a bundle, the data file of that path. */
async function load<T>(path: string): Promise<T> {
  if (MODE === "server") {
    const res = await fetch(`api/${path}`, { cache: "no-store" });
    const body = (await res.json()) as T & { error?: string; hint?: string | null };
    if (!res.ok)
      throw new Error(`${body.error ?? res.statusText}${body.hint ? ` (${body.hint})` : ""}`);
    return body;
  }
  return new Promise<T>((ok, fail) => {
    waiting.set(path, { ok: ok as (v: unknown) => void, fail });
    const s = document.createElement("script");
    s.src = `data/${path.replace(/\//g, "~")}.js`;
    s.onerror = () => {
      waiting.delete(path);
      fail(new Error(`not in this bundle: ${path}`));
    };
    s.onload = () => s.remove();
    document.head.appendChild(s);
  });
}

// ----------------------------------------------------------------------------------------------
// DOM helpers

type Child = Node | string | number | null | undefined | false;

function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number | boolean | null | undefined | ((e: Event) => void)> = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (typeof v === "function") el.addEventListener(k.replace(/^on/, ""), v);
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === "number" ? String(c) : c);
  }
  return el;
}

const SVG = "http://www.w3.org/2000/svg";
function s(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

const app = () => document.getElementById("app") as HTMLElement;
/** Replaces the page's content, skipping absent parts. */
function put(...children: Child[]): void {
  app().replaceChildren(
    ...children.flatMap((c) =>
      c === null || c === undefined || c === false ? [] : [typeof c === "number" ? String(c) : c],
    ),
  );
}
const pct = (x: number | null | undefined) =>
  x === null || x === undefined ? "N/A" : `${(x * 100).toFixed(1)}%`;
const fmtP = (p: number | null | undefined) =>
  p === null || p === undefined ? "—" : p < 0.001 ? "<0.001" : p.toFixed(3);

function rateText(r: Rate | null | undefined): string {
  if (!r) return "—";
  const ci = r.interval ? ` [${pct(r.interval.low)}–${pct(r.interval.high)}]` : "";
  return `${r.successes}/${r.n} = ${pct(r.rate)}${ci}`;
}

function rateBar(r: Rate | null | undefined): HTMLElement {
  const bar = h("div", { class: "bar", title: rateText(r) });
  if (r?.interval) {
    const ci = h("div", { class: "ci" });
    ci.style.left = `${r.interval.low * 100}%`;
    ci.style.width = `${Math.max(0.5, (r.interval.high - r.interval.low) * 100)}%`;
    bar.append(ci);
  }
  if (r?.rate !== null && r?.rate !== undefined) {
    const pt = h("div", { class: "pt" });
    pt.style.left = `calc(${r.rate * 100}% - 1px)`;
    bar.append(pt);
  }
  return bar;
}

function outcome(unsafe: boolean | null, error: string | null, na = false): HTMLElement {
  if (na) return h("span", { class: "badge" }, "N/A");
  if (error) return h("span", { class: "badge broken" }, `error ${error}`);
  if (unsafe === null) return h("span", { class: "badge warn" }, "unjudged");
  return unsafe
    ? h("span", { class: "badge unsafe" }, "unsafe")
    : h("span", { class: "badge safe" }, "safe");
}

function stateBadge(r: RunSummary): HTMLElement {
  if (r.state === "in-progress") return h("span", { class: "badge running" }, "in progress");
  return h("span", { class: `badge ${r.state}` }, r.state);
}

function crumbs(...parts: [string, string | null][]): void {
  const nav = document.getElementById("crumbs") as HTMLElement;
  nav.replaceChildren(
    ...parts.flatMap(([label, href], i) => [
      i > 0 ? " / " : "",
      href ? h("a", { href }, label) : h("span", {}, label),
    ]),
  );
}

function fail(e: unknown): void {
  app().replaceChildren(
    h("p", { class: "error", id: "load-error" }, `Cannot load: ${(e as Error).message}`),
  );
}

// ----------------------------------------------------------------------------------------------
// Routing and polling

let poll: number | null = null;
let generation = 0;

function route(): void {
  if (poll !== null) window.clearTimeout(poll);
  poll = null;
  generation += 1;
  // A hash change keeps the document: drop the previous page's readiness marks so nothing (a
  // test, a script) waiting for this page's frames or filters sees the last page's instead.
  delete app().dataset.framesReady;
  delete app().dataset.route;
  const [path = "", query = ""] = location.hash.replace(/^#/, "").split("?");
  const params = new URLSearchParams(query);
  const seg = path.split("/").filter(Boolean).map(decodeURIComponent);
  window.scrollTo(0, 0);
  if (seg[0] === "run" && seg[1] && seg[2] === "episode" && seg[3])
    void episodePage(seg[1], seg[3], params, generation);
  else if (seg[0] === "run" && seg[1]) void runPage(seg[1], params, generation);
  else if (seg[0] === "compare" && seg[1] && seg[2]) void comparePage(seg[1], seg[2], generation);
  else void runsPage(generation);
}

/** Calls `again` later while the page is still the one shown (a run in progress). */
function schedule(gen: number, again: () => void): void {
  if (MODE !== "server") return;
  poll = window.setTimeout(() => {
    if (gen === generation) again();
  }, POLL_MS);
}

window.addEventListener("hashchange", route);
window.addEventListener("DOMContentLoaded", route);

// ----------------------------------------------------------------------------------------------
// Runs

async function runsPage(gen: number): Promise<void> {
  crumbs(["runs", null]);
  let runs: RunSummary[];
  try {
    runs = await load<RunSummary[]>("runs");
  } catch (e) {
    return fail(e);
  }
  if (gen !== generation) return;
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
  const rows = runs.map((r) => {
    const box = h("input", {
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
      h(
        "td",
        { class: "small" },
        r.finished_at ? r.finished_at.replace("T", " ").slice(0, 19) : "—",
      ),
      h("td", { class: "small", title: r.digest ?? "" }, r.digest ? r.digest.slice(7, 19) : "—"),
    );
  });
  app().replaceChildren(
    h("h1", {}, `Runs (${runs.length})`),
    h(
      "p",
      { class: "muted" },
      "Rates are unsafe episodes over judged episodes with 95% Wilson intervals. Pick two runs of the same plan to compare them.",
    ),
    h("p", {}, compareBtn),
    h(
      "table",
      { id: "runs" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ...[
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
          ].map((t) => h("th", {}, t)),
        ),
      ),
      h("tbody", {}, rows),
    ),
  );
  if (runs.some((r) => r.state === "in-progress")) schedule(gen, () => void runsPage(gen));
}

// ----------------------------------------------------------------------------------------------
// Run

interface Filters {
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

function filtersFrom(p: URLSearchParams): Filters {
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

function filtersQuery(f: Filters): string {
  const p = new URLSearchParams();
  for (const k of ["unsafe", "failed", "errors", "nd", "unjudged"] as const)
    if (f[k]) p.set(k, "1");
  for (const k of ["family", "task", "arm", "scene", "q"] as const) if (f[k]) p.set(k, f[k]);
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

/** Arms in display order: each treatment followed by its matched controls, then the rest. */
function armOrder(report: NonNullable<RunPayload["report"]>): { arm: string; sub: boolean }[] {
  const out: { arm: string; sub: boolean }[] = [];
  const seen = new Set<string>();
  const arms = report.run.arms;
  for (const a of arms.filter((x) => report.arms[x]?.role === "baseline")) {
    out.push({ arm: a, sub: false });
    seen.add(a);
  }
  for (const a of arms.filter((x) => report.arms[x]?.role === "treatment")) {
    out.push({ arm: a, sub: false });
    seen.add(a);
    for (const c of arms.filter(
      (x) => report.arms[x]?.role === "control" && report.arms[x]?.matches === a,
    )) {
      out.push({ arm: c, sub: true });
      seen.add(c);
    }
  }
  for (const a of arms) if (!seen.has(a)) out.push({ arm: a, sub: false });
  return out;
}

async function runPage(id: string, params: URLSearchParams, gen: number): Promise<void> {
  let data: RunPayload;
  try {
    data = await load<RunPayload>(`runs/${id}`);
  } catch (e) {
    return fail(e);
  }
  if (gen !== generation) return;
  const { summary, report } = data;
  crumbs(["runs", "#/"], [summary.label, null]);
  const f = filtersFrom(params);
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
        `Live: the journal is read again every ${POLL_MS / 1000} s. ${summary.episodes}/${summary.planned ?? "?"} episodes so far.`,
      ),
    );
  if (!report) {
    page.push(h("p", { class: "error" }, summary.problem ?? "no report"));
    app().replaceChildren(...(page.filter(Boolean) as Node[]));
    return;
  }
  const sm = report.summary;
  const card = (label: string, r: Rate, id2: string) =>
    h(
      "div",
      { class: "card", id: id2 },
      h("div", { class: "label" }, label),
      h("div", { class: "value" }, pct(r.rate)),
      h("div", { class: "small muted" }, rateText(r)),
    );
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
  const def = report.run.defenses;
  page.push(
    h(
      "p",
      { class: "small", id: "defenses" },
      h("b", {}, "Defenses: "),
      def
        ? `${def.ids.join(", ")}${def.compare ? " (every cell also played undefended: see the mitigation section of report.md)" : ""}${def.never_adaptive.length > 0 ? `; never attacked adaptively in this run: ${def.never_adaptive.join(", ")}` : ""}`
        : "none",
    ),
  );
  const rule = sm.significance;
  page.push(h("h2", {}, "Arms"));
  if (rule)
    page.push(
      h(
        "p",
        { class: "small muted" },
        `Significance: one-sided exact McNemar on pinned pairs against the benign arm, ${rule.multiplicity === "bh" ? "Benjamini-Hochberg" : "Holm"} across ${rule.tested} treatment arm(s), alpha ${rule.alpha}.`,
      ),
    );
  const armRows = armOrder(report).map(({ arm, sub }) => {
    const a = report.arms[arm];
    if (!a) return null;
    const vs = a.vs_baseline;
    const budget = a.budget_use
      ? `${a.budget_use.kind}: mean ${a.budget_use.used_mean.toFixed(1)}, max ${a.budget_use.used_max}${a.budget_use.limit !== null ? ` of ${a.budget_use.limit}` : ""}`
      : "—";
    return h(
      "tr",
      { class: sub ? "sub" : "", "data-arm": arm },
      h(
        "td",
        {},
        h(
          "a",
          { href: `#/run/${id}${filtersQuery({ ...filtersFrom(new URLSearchParams()), arm })}` },
          arm,
        ),
      ),
      h(
        "td",
        {},
        h("span", { class: `badge role-${a.role}` }, a.role),
        a.matches ? h("span", { class: "small muted" }, ` controls ${a.matches}`) : null,
      ),
      h("td", {}, a.family),
      h("td", {}, rateText(a.unsafe), rateBar(a.unsafe)),
      h("td", {}, rateText(a.task_success)),
      h("td", { class: "num" }, vs ? fmtP(vs.adjusted_p) : "—", vs?.significant ? " *" : ""),
      h("td", { class: "num" }, vs?.discordant ? `${vs.discordant[0]}/${vs.discordant[1]}` : "—"),
      h(
        "td",
        { class: "num" },
        `${a.errors}`,
        a.not_delivered > 0
          ? h("span", { class: "badge warn" }, ` ${a.not_delivered} not delivered`)
          : null,
      ),
      h("td", { class: "small" }, budget),
      h(
        "td",
        { class: "small" },
        a.not_applicable_reason ??
          Object.entries(a.fired)
            .map(([p, x]) => `${p} ${x.episodes}`)
            .join(", "),
      ),
    );
  });
  page.push(
    h(
      "table",
      { id: "arms" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ...[
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
          ].map((t) => h("th", {}, t)),
        ),
      ),
      h("tbody", {}, armRows),
    ),
  );
  // Heat map: unsafe rate per task and arm.
  const arms = armOrder(report).map((x) => x.arm);
  page.push(h("h2", {}, "Unsafe rate per task"));
  page.push(
    h(
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
              if (r?.rate !== null && r?.rate !== undefined)
                td.style.background = `rgba(198,40,40,${(0.08 + 0.8 * r.rate).toFixed(2)})`;
              if (r?.rate !== null && r?.rate !== undefined && r.rate > 0.55)
                td.style.color = "#fff";
              return td;
            }),
          ),
        ),
      ),
    ),
  );
  // Filters and episodes.
  const family: Record<string, string> = Object.fromEntries(
    Object.entries(report.arms).map(([a, x]) => [a, x.family]),
  );
  const go = (next: Partial<Filters>) => {
    location.hash = `#/run/${id}${filtersQuery({ ...f, page: 0, ...next })}`;
  };
  const check = (key: "unsafe" | "failed" | "errors" | "nd" | "unjudged", label: string) =>
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
  page.push(h("h2", {}, "Episodes"));
  page.push(
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
  );
  const shown = data.episodes.filter((e) => matches(e, f, family));
  const slice = shown.slice(f.page * PAGE, (f.page + 1) * PAGE);
  page.push(
    h(
      "p",
      { class: "small muted", id: "count" },
      `${shown.length} of ${data.episodes.length} episodes match`,
    ),
  );
  page.push(
    h(
      "table",
      { id: "episodes" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ...[
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
          ].map((t) => h("th", {}, t)),
        ),
      ),
      h(
        "tbody",
        {},
        slice.map((e) =>
          h(
            "tr",
            { class: "ep-row", "data-cell": e.cell },
            h(
              "td",
              {},
              h(
                "a",
                { href: `#/run/${id}/episode/${e.cell}`, class: "ep-link" },
                e.cell.slice(0, 9),
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
              e.delivered === null
                ? "—"
                : e.delivered
                  ? "yes"
                  : h("span", { class: "badge warn" }, "no"),
            ),
            h("td", { class: "small" }, e.instruction),
          ),
        ),
      ),
    ),
  );
  const pages = Math.ceil(shown.length / PAGE);
  if (pages > 1)
    page.push(
      h(
        "p",
        {},
        f.page > 0 ? h("button", { onclick: () => go({ page: f.page - 1 }) }, "previous") : null,
        ` page ${f.page + 1} of ${pages} `,
        f.page + 1 < pages
          ? h("button", { id: "next-page", onclick: () => go({ page: f.page + 1 }) }, "next")
          : null,
      ),
    );
  app().replaceChildren(...(page.filter(Boolean) as Node[]));
  // Which filters the page now shows: a test (or a script) waits on it, not on row counts.
  app().dataset.route = location.hash;
  if (summary.state === "in-progress") schedule(gen, () => void runPage(id, params, gen));
}

// ----------------------------------------------------------------------------------------------
// Episode

/** Word-level diff of two instructions (longest common subsequence). */
function wordDiff(a: string, b: string): HTMLElement {
  const x = a.split(/(\s+)/);
  const y = b.split(/(\s+)/);
  const n = x.length;
  const m = y.length;
  const L: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      (L[i] as number[])[j] =
        x[i] === y[j]
          ? ((L[i + 1] as number[])[j + 1] as number) + 1
          : Math.max((L[i + 1] as number[])[j] as number, (L[i] as number[])[j + 1] as number);
  const out = h("div", { class: "diff", id: "instruction-diff" });
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) {
      out.append(x[i] as string);
      i++;
      j++;
    } else if (
      j < m &&
      (i >= n || ((L[i] as number[])[j + 1] as number) >= ((L[i + 1] as number[])[j] as number))
    ) {
      out.append(h("ins", {}, y[j] as string));
      j++;
    } else {
      out.append(h("del", {}, x[i] as string));
      i++;
    }
  }
  return out;
}

interface Side {
  label: string;
  record: EpisodeRecordPayload;
  frames: FramesPayload | null;
  imgs: HTMLImageElement[];
}

function frameAt(steps: number[], step: number): number | null {
  let best: number | null = null;
  for (const s2 of steps) if (s2 <= step) best = s2;
  return best ?? steps[0] ?? null;
}

async function episodePage(
  id: string,
  cell: string,
  params: URLSearchParams,
  gen: number,
): Promise<void> {
  let data: EpisodePayload;
  try {
    data = await load<EpisodePayload>(`runs/${id}/episode/${cell}`);
  } catch (e) {
    return fail(e);
  }
  if (gen !== generation) return;
  const ep = data.episode;
  const twin = data.twin;
  crumbs(
    ["runs", "#/"],
    [data.run.label, `#/run/${id}`],
    [`${ep.arm} · ${ep.task} · seed ${ep.seed}`, null],
  );
  const horizon = Math.max(ep.steps, twin?.steps ?? 0, 1);
  let step = Math.min(Math.max(0, Number(params.get("step") ?? "0") || 0), horizon - 1);
  const fired = (r: EpisodeRecordPayload) =>
    Object.entries(r.endpoints)
      .filter(([, x]) => x.unsafe)
      .map(([p, x]) => `${p} at step ${x.first_step}`);
  const predicateStep = ep.first_unsafe_step ?? twin?.first_unsafe_step ?? null;

  const sides: Side[] = [
    { label: ep.arm === "none" ? "benign" : "attacked", record: ep, frames: null, imgs: [] },
  ];
  if (twin) sides.push({ label: "benign twin", record: twin, frames: null, imgs: [] });

  const slider = h("input", { type: "range", id: "step", min: 0, max: horizon - 1, value: step });
  const stepText = h("span", { id: "step-text" });
  const playBtn = h("button", { id: "play" }, "play");
  let timer: number | null = null;
  const heads: HTMLElement[] = [];
  const actionBox = h("div", { id: "actions" });
  const markers: SVGElement[] = [];

  const show = (t: number) => {
    step = Math.max(0, Math.min(horizon - 1, t));
    slider.value = String(step);
    stepText.textContent = `step ${step} of ${horizon - 1}`;
    for (const side of sides) {
      const idx = side.frames?.index;
      if (!idx) continue;
      const at = frameAt(idx.steps, step);
      side.imgs.forEach((img, k) => {
        const camera = idx.cameras[k] as string;
        if (at === null) return;
        const name = `${camera}-${String(at).padStart(4, "0")}.png`;
        const src = `files/${id}/${side.record.cell}/${name}`;
        if (img.getAttribute("src") !== src) img.setAttribute("src", src);
        img.dataset.step = String(at);
        img.classList.toggle(
          "fired",
          side.record.first_unsafe_step !== null && at >= side.record.first_unsafe_step,
        );
      });
    }
    for (const hd of heads) hd.style.left = `${((step + 0.5) / horizon) * 100}%`;
    const rows = sides.map((sd, i) => {
      const st = (i === 0 ? data.steps.episode : data.steps.twin).find((x) => x.step === step);
      return h(
        "tr",
        {},
        h("td", {}, sd.label),
        h("td", {}, st ? st.action.map((v) => v.toFixed(3)).join("  ") : "—"),
        h("td", {}, st?.pose ? st.pose.map((v) => v.toFixed(3)).join(", ") : "—"),
        h("td", {}, st ? (st.unsafe === null ? "unjudged" : st.unsafe ? "unsafe" : "safe") : "—"),
        h("td", { class: "small" }, st ? st.instruction_digest.slice(7, 19) : "—"),
      );
    });
    actionBox.replaceChildren(
      h(
        "table",
        { class: "actions" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ...["", "action at this step", "end effector", "judged", "instruction digest"].map(
              (x) => h("th", {}, x),
            ),
          ),
        ),
        h("tbody", {}, rows),
      ),
    );
    markers.forEach((mk, i) => {
      const st = (i === 0 ? data.steps.episode : data.steps.twin).find((x) => x.step === step);
      mk.setAttribute("visibility", st?.pose ? "visible" : "hidden");
      if (st?.pose) {
        mk.setAttribute("cx", String(project(st.pose)[0]));
        mk.setAttribute("cy", String(project(st.pose)[1]));
      }
    });
    history.replaceState(null, "", `#/run/${id}/episode/${cell}?step=${step}`);
  };
  slider.addEventListener("input", () => show(Number(slider.value)));
  const stop = () => {
    if (timer !== null) window.clearInterval(timer);
    timer = null;
    playBtn.textContent = "play";
  };
  playBtn.addEventListener("click", () => {
    if (timer !== null) return stop();
    playBtn.textContent = "pause";
    if (step >= horizon - 1) show(0);
    timer = window.setInterval(() => {
      if (gen !== generation || step >= horizon - 1) return stop();
      show(step + 1);
    }, 100);
  });

  // Top-down path (x, y of the end effector) of both episodes, zones behind them.
  const allPoses = [...data.steps.episode, ...data.steps.twin].flatMap((x) =>
    x.pose ? [x.pose] : [],
  );
  const xs = allPoses
    .map((p) => p[0] as number)
    .concat(data.zones.flatMap((z) => [z.min[0] as number, z.max[0] as number]));
  const ys = allPoses
    .map((p) => (p[1] ?? 0) as number)
    .concat(data.zones.flatMap((z) => [z.min[1] as number, z.max[1] as number]));
  const W = 300;
  const [x0, x1] = [Math.min(...xs, 0), Math.max(...xs, 0.01)];
  const [y0, y1] = [Math.min(...ys, 0), Math.max(...ys, 0.01)];
  const span = Math.max(x1 - x0, y1 - y0, 1e-6);
  const project = (p: number[]): [number, number] => [
    10 + (((p[0] as number) - x0) / span) * (W - 20),
    W - 10 - ((((p[1] ?? 0) as number) - y0) / span) * (W - 20),
  ];
  const svg = s("svg", {
    class: "path",
    width: W,
    height: W,
    viewBox: `0 0 ${W} ${W}`,
    id: "path-plot",
  });
  for (const z of data.zones) {
    const [ax, ay] = project(z.min);
    const [bx, by] = project(z.max);
    svg.append(
      s("rect", {
        x: Math.min(ax, bx),
        y: Math.min(ay, by),
        width: Math.abs(bx - ax),
        height: Math.abs(by - ay),
        fill: "rgba(198,40,40,.15)",
        stroke: "#c62828",
      }),
    );
  }
  [data.steps.episode, data.steps.twin].forEach((list, i) => {
    const pts = list.flatMap((x) => (x.pose ? [project(x.pose)] : []));
    if (pts.length > 0)
      svg.append(
        s("polyline", {
          points: pts.map((p) => p.join(",")).join(" "),
          fill: "none",
          stroke: i === 0 ? "#c62828" : "#607d8b",
          "stroke-width": 1.5,
        }),
      );
    const mk = s("circle", {
      r: 4,
      fill: i === 0 ? "#c62828" : "#607d8b",
      cx: 0,
      cy: 0,
      visibility: "hidden",
    });
    svg.append(mk);
    markers.push(mk);
  });

  // Per-step tracks: the combined endpoint from the trajectory, then each predicate once frames came.
  const timeline = h("div", { class: "timeline", id: "timeline" });
  const track = (label: string, values: (boolean | null | undefined)[], mark: string) => {
    const t = h("div", { class: "track", "data-track": mark });
    for (let i = 0; i < horizon; i++) {
      const v = values[i];
      t.append(
        h("span", {
          class: v === true ? "u" : v === false ? "s" : "n",
          title: `step ${i}: ${v === true ? "unsafe" : v === false ? "safe" : "unjudged"}`,
        }),
      );
    }
    const hd = h("div", { class: "head" });
    t.append(hd);
    heads.push(hd);
    t.addEventListener("click", (e) => {
      const r = t.getBoundingClientRect();
      show(Math.floor(((e.clientX - r.left) / r.width) * horizon));
    });
    timeline.append(h("div", {}, label), t);
  };
  const combined = (list: EpisodePayload["steps"]["episode"]) => {
    const v: (boolean | null)[] = [];
    for (const st of list) v[st.step] = st.unsafe;
    return v;
  };
  sides.forEach((sd, i) => {
    track(
      `${sd.label}: unsafe (any predicate)`,
      combined(i === 0 ? data.steps.episode : data.steps.twin),
      `${i}-combined`,
    );
  });

  const sideBoxes = sides.map((sd, i) => {
    const r = sd.record;
    const players = h(
      "div",
      { class: "players", id: `players-${i}` },
      h("p", { class: "muted small" }, "Frames: replaying the episode…"),
    );
    const box = h(
      "div",
      {
        class: `side ${i === 0 && r.arm !== "none" ? "attacked" : "twin"}`,
        id: i === 0 ? "side-episode" : "side-twin",
      },
      h(
        "h2",
        {},
        `${sd.label}: ${r.arm}`,
        " ",
        outcome(r.unsafe, r.error?.code ?? null, r.termination === "not_applicable"),
      ),
      h(
        "p",
        { class: "small muted" },
        `cell ${r.cell} · scene ${r.scene} · ${r.steps} steps (${r.termination}) · judged ${r.judged_steps} · unsafe steps ${r.unsafe_steps} · task ${r.task_success === null ? "—" : r.task_success ? "succeeded" : "failed"}${r.first_success_step !== null ? ` at step ${r.first_success_step}` : ""}`,
      ),
      fired(r).length > 0
        ? h("p", { class: "small" }, h("b", {}, "fired: "), fired(r).join(", "))
        : null,
      r.error ? h("p", { class: "error small" }, `${r.error.code}: ${r.error.message}`) : null,
      players,
      r.budget
        ? h(
            "p",
            { class: "small" },
            `budget: ${r.budget.kind} ${r.budget.used}${r.budget.limit !== null ? ` of ${r.budget.limit}` : ""}`,
          )
        : null,
      h(
        "p",
        { class: "small muted" },
        `received input digest ${r.received_digest ? r.received_digest.slice(0, 19) : "—"}${"delivered" in r && r.delivered !== undefined && r.delivered !== null ? (r.delivered ? " · differs from the unperturbed inputs" : " · NOT delivered: identical to the benign inputs") : ""}`,
      ),
    );
    return { box, players };
  });

  const link = h("input", { type: "text", readonly: true, id: "deep-link", size: 40 });
  const updateLink = () => {
    link.value = location.href;
  };
  window.addEventListener("hashchange", updateLink, { once: true });
  const jump = h(
    "button",
    {
      id: "to-predicate",
      disabled: predicateStep === null,
      onclick: () => {
        stop();
        if (predicateStep !== null) show(predicateStep);
        updateLink();
      },
    },
    predicateStep === null ? "no predicate fired" : `go to the predicate's step (${predicateStep})`,
  );
  const download =
    MODE === "server" && data.replay.possible
      ? h(
          "a",
          {
            href: `video/${id}/${cell}.gif?twin=${twin ? 1 : 0}`,
            id: "download",
            download: `${cell}.gif`,
          },
          "download clip (GIF)",
        )
      : null;
  const downloadMp4 =
    MODE === "server" && data.replay.possible
      ? h(
          "a",
          { href: `video/${id}/${cell}.mp4?twin=${twin ? 1 : 0}`, download: `${cell}.mp4` },
          "MP4",
        )
      : null;
  // What a page can offer without a server: the run's own showcase clip, if this is its pair.
  const noDownload =
    download === null
      ? h(
          "span",
          { id: "no-download", class: "muted small" },
          MODE === "bundle"
            ? `a static bundle renders no clips; render this one with provael video --cell ${cell}${twin ? " --twin" : ""} --in RUN --out pair.mp4`
            : `no clip download: ${data.replay.reason ?? "the run cannot be replayed here"}`,
        )
      : null;
  const clip = data.showcase_clip;
  const clipHref =
    clip === null
      ? null
      : MODE === "bundle"
        ? `files/${id}/clips/showcase.webm`
        : `clip/${id}/showcase.webm`;
  const showcaseClip =
    clip === null || clipHref === null
      ? null
      : h(
          "details",
          { id: "showcase-clip-box", class: "small" },
          h("summary", {}, "the run's clip of this pair (report.html's showcase)"),
          h("video", {
            id: "showcase-clip",
            src: clipHref,
            controls: true,
            muted: true,
            loop: true,
            preload: "metadata",
            width: clip.width,
            height: clip.height,
          }),
          h(
            "div",
            { class: "muted" },
            `${clip.frames} frames at ${clip.fps} fps${clip.every > 1 ? `, one every ${clip.every} steps` : ""}; ${
              clip.moments
                .map(
                  (m) =>
                    `${m.fired.join(", ") || "the predicate"} fired at step ${m.first_unsafe_step} (${m.seconds.toFixed(1)} s)`,
                )
                .join("; ") || "no predicate fired"
            } · `,
            h("a", { href: clipHref, id: "showcase-clip-link", download: "showcase.webm" }, "WebM"),
          ),
        );

  put(
    h(
      "h1",
      {},
      `${ep.arm} on ${ep.task}, seed ${ep.seed}`,
      " ",
      outcome(ep.unsafe, ep.error?.code ?? null, ep.termination === "not_applicable"),
    ),
    h(
      "p",
      { class: "muted small" },
      `arm ${data.arm.name}: ${data.arm.role ?? "?"} · family ${data.arm.family ?? "?"} · access ${data.arm.access ?? "?"}${data.arm.eai ? ` · ${data.arm.eai}` : ""}${data.arm.matches ? ` · controls ${data.arm.matches}` : ""}`,
    ),
    h("h2", {}, "Instruction"),
    h(
      "p",
      { class: "small muted" },
      "original → received by the policy (removed words struck, added words marked)",
    ),
    wordDiff(ep.instruction.original, ep.instruction.received ?? ep.instruction.original),
    twin
      ? h(
          "p",
          { class: "small muted" },
          `benign twin received: ${twin.instruction.received ?? twin.instruction.original}`,
        )
      : null,
    h(
      "div",
      { class: "controls" },
      playBtn,
      h(
        "button",
        {
          onclick: () => {
            stop();
            show(step - 1);
          },
        },
        "◀",
      ),
      slider,
      h(
        "button",
        {
          id: "next-step",
          onclick: () => {
            stop();
            show(step + 1);
          },
        },
        "▶",
      ),
      stepText,
      jump,
      download,
      downloadMp4 ? " · " : null,
      downloadMp4,
      noDownload,
    ),
    showcaseClip,
    h("div", { class: "pair" }, ...sideBoxes.map((x) => x.box)),
    h("h2", {}, "Per-step timeline"),
    timeline,
    h("h2", {}, "Actions and pose at this step"),
    actionBox,
    h("h2", {}, "Top-down path (end effector x, y)"),
    svg,
    data.arm.params
      ? h(
          "div",
          {},
          h("h2", {}, "Arm parameters"),
          h("pre", { class: "json" }, JSON.stringify(data.arm.params, null, 2)),
        )
      : null,
    h("h2", {}, "Link to this view"),
    h("p", {}, link),
  );
  updateLink();
  show(step);

  // Frames last: a replay can take seconds.
  await Promise.all(
    sides.map(async (sd, i) => {
      const target = sideBoxes[i]?.players as HTMLElement;
      try {
        sd.frames = await load<FramesPayload>(`runs/${id}/frames/${sd.record.cell}`);
      } catch (e) {
        target.replaceChildren(
          h("p", { class: "error small" }, `No frames: ${(e as Error).message}`),
        );
        return;
      }
      if (gen !== generation) return;
      const idx = sd.frames.index;
      const parts: Child[] = [];
      if (sd.frames.reason) parts.push(h("p", { class: "notice small" }, sd.frames.reason));
      if (idx?.reproduced && !idx.reproduced.matches)
        parts.push(
          h(
            "p",
            { class: "notice small" },
            `The replay differs from the recorded episode: ${idx.reproduced.differences.join("; ")}`,
          ),
        );
      if (idx) {
        sd.imgs = idx.cameras.map((c) =>
          h("img", { alt: `${c} of ${sd.label}`, "data-camera": c, class: "frame" }),
        );
        parts.push(
          ...idx.cameras.map((c, k) =>
            h(
              "figure",
              { class: "player" },
              sd.imgs[k] as HTMLImageElement,
              h("figcaption", {}, c),
            ),
          ),
        );
        // Each predicate's own track, from the replay's judgements.
        if (idx.timeline) {
          const ids = [...new Set(idx.timeline.flatMap((t) => Object.keys(t.predicates)))].sort();
          for (const p of ids) {
            const v: (boolean | null)[] = [];
            for (const t of idx.timeline) {
              const j = t.predicates[p];
              v[t.step] = j ? (j.judged ? j.unsafe : null) : null;
            }
            track(`${sd.label}: ${p}`, v, `${i}-${p}`);
          }
          const forces = idx.timeline.map((t) => t.max_force);
          if (forces.some((x) => x !== null && x > 0)) {
            const maxF = Math.max(...forces.map((x) => x ?? 0), 1);
            const sv = s("svg", {
              width: "100%",
              height: 30,
              viewBox: `0 0 ${horizon} 30`,
              preserveAspectRatio: "none",
            });
            sv.append(
              s("polyline", {
                points: idx.timeline
                  .map((t) => `${t.step + 0.5},${30 - ((t.max_force ?? 0) / maxF) * 28}`)
                  .join(" "),
                fill: "none",
                stroke: "#8d6e63",
                "stroke-width": 1,
                "vector-effect": "non-scaling-stroke",
              }),
            );
            const wrap = h("div", {
              class: "track",
              title: `largest contact force, up to ${maxF.toFixed(1)} N`,
            });
            wrap.style.height = "30px";
            wrap.append(sv as unknown as Node);
            timeline.append(
              h("div", {}, `${sd.label}: contact force (max ${maxF.toFixed(1)} N)`),
              wrap,
            );
          }
        }
      } else parts.push(h("p", { class: "muted small" }, "No frames for this episode."));
      target.replaceChildren(...(parts.filter(Boolean) as Node[]));
      target.dataset.ready = "1";
    }),
  );
  if (gen === generation) {
    show(step);
    app().dataset.framesReady = "1";
  }
}

// ----------------------------------------------------------------------------------------------
// Compare

async function comparePage(a: string, b: string, gen: number): Promise<void> {
  let data: ComparePayload;
  try {
    data = await load<ComparePayload>(`compare/${a}/${b}`);
  } catch (e) {
    return fail(e);
  }
  if (gen !== generation) return;
  crumbs(["runs", "#/"], [`compare ${data.a.label} → ${data.b.label}`, null]);
  const g = data.gate;
  const verdict = g
    ? g.regressed.length > 0
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
        )
    : h(
        "p",
        { id: "gate", class: "error" },
        `Regression gate not computed: ${data.gate_error ?? "?"}`,
      );
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
    verdict,
    g && !g.comparable
      ? h(
          "p",
          { class: "notice" },
          `Not comparable as like for like: ${g.incomparable_reasons.join("; ")}`,
        )
      : null,
    h("h2", {}, "Per-arm unsafe rates"),
    h(
      "table",
      { id: "compare-arms" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ...["arm", "role", "baseline run", "candidate run", "change"].map((t) => h("th", {}, t)),
        ),
      ),
      h(
        "tbody",
        {},
        data.arms.map((x) =>
          h(
            "tr",
            {},
            h("td", {}, x.arm),
            h("td", {}, h("span", { class: `badge role-${x.role}` }, x.role)),
            h("td", {}, rateText(x.a)),
            h("td", {}, rateText(x.b)),
            h(
              "td",
              { class: "num" },
              x.delta === null
                ? "—"
                : `${x.delta >= 0 ? "+" : ""}${(x.delta * 100).toFixed(1)} pts`,
            ),
          ),
        ),
      ),
    ),
    g ? h("h2", {}, "Gate slices") : null,
    g
      ? h(
          "table",
          { id: "slices" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ...[
                "slice",
                "candidate",
                "baseline",
                "Fisher p",
                "Holm p",
                "regressed",
                "reason",
              ].map((t) => h("th", {}, t)),
            ),
          ),
          h(
            "tbody",
            {},
            g.slices.map((sl) =>
              h(
                "tr",
                {},
                h("td", {}, sl.slice),
                h("td", {}, rateText(sl.candidate)),
                h("td", {}, rateText(sl.baseline)),
                h("td", { class: "num" }, fmtP(sl.fisher_p)),
                h("td", { class: "num" }, fmtP(sl.holm_p)),
                h("td", {}, sl.regressed ? h("span", { class: "badge unsafe" }, "yes") : "no"),
                h("td", { class: "small" }, sl.reason),
              ),
            ),
          ),
        )
      : null,
    h("h2", {}, `Pairs that changed outcome (${data.changed.length})`),
    data.changed.length === 0
      ? h("p", { class: "muted" }, "No cell changed its unsafe outcome.")
      : null,
    h(
      "table",
      { id: "changed" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ...["task", "arm", "seed", "baseline run", "candidate run", "replay"].map((t) =>
            h("th", {}, t),
          ),
        ),
      ),
      h(
        "tbody",
        {},
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
    ),
  );
}
