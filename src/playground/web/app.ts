/// <reference lib="dom" />
/**
 * The playground page (loaded by page.ts once the package files are installed): a `provael attack` plan chosen in a form (or the URL's query), played by
 * Web Workers, with the arms table as it fills in, what each worker's policy sees, the attacked
 * episode beside its benign twin, and at the end the run's files to download, byte for byte what
 * the CLI command shown beside them writes.
 */
import type { EpisodeRecord } from "../../core/episode.js";
import type { Image } from "../../core/types.js";
import type { Report } from "../../report/build.js";
import { displayOrder, formatP, formatRate } from "../../report/format.js";
import type { Cell } from "../../runner/plan.js";
import { suites } from "../../suites/index.js";
import {
  PAGE_MAX_EPISODES,
  PAGE_POLICIES,
  type PageChoices,
  type PageOutputs,
  PageRun,
  pagePlan,
  pageSetup,
} from "../session.js";
import type { FromWorker, ToWorker } from "./protocol.js";

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

function el(tag: string, attrs: Record<string, string> = {}, ...children: (Node | string)[]) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}

const list = (v: string | null) =>
  v
    ? v
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "")
    : undefined;

/** The form's choices: only what the person set, as flags given on a command line. */
function choices(): PageChoices {
  const c: PageChoices = {};
  const policy = $<HTMLSelectElement>("policy").value;
  if (policy !== "tiny-vla") c.policy = policy;
  const tasks = [...document.querySelectorAll<HTMLInputElement>("#tasks input:checked")].map(
    (i) => i.value,
  );
  if (tasks.length > 0) c.tasks = tasks;
  const attacks = list($<HTMLInputElement>("attacks").value);
  if (attacks) c.attacks = attacks;
  const seeds = $<HTMLInputElement>("seeds").value.trim();
  if (seeds !== "") c.seeds = Number(seeds);
  return c;
}

function fillForm(q: URLSearchParams) {
  const policy = $<HTMLSelectElement>("policy");
  for (const p of PAGE_POLICIES) policy.append(el("option", { value: p }, p));
  policy.value = q.get("policy") ?? "tiny-vla";
  const chosen = new Set(list(q.get("tasks")) ?? []);
  const box = $("tasks");
  for (const t of suites.get("tabletop").tasks()) {
    const input = el("input", { type: "checkbox", value: t.id }) as HTMLInputElement;
    input.checked = chosen.has(t.id);
    box.append(el("label", {}, input, ` ${t.id}`));
  }
  $<HTMLInputElement>("attacks").value = q.get("attacks") ?? "";
  $<HTMLInputElement>("seeds").value = q.get("seeds") ?? "";
  const workers = $<HTMLInputElement>("workers");
  workers.max = String(navigator.hardwareConcurrency || 1);
  workers.value = q.get("workers") ?? String(Math.min(navigator.hardwareConcurrency || 1, 4));
}

/** Shows the plan the form says, or why a page will not play it (and the command that will). */
function preview(): ReturnType<typeof pagePlan> | null {
  const out = $("plan");
  try {
    const p = pagePlan(choices());
    out.textContent = `${p.cells.length} episodes (${p.plan.tasks.length} task(s) × ${p.plan.arms.length} arms: ${p.plan.arms.join(", ")} × ${p.plan.seeds} seeds). The same plan from the CLI: ${p.command}${p.note ? `\nNote: ${p.note}` : ""}`;
    out.className = "";
    return p;
  } catch (e) {
    const err = e as Error & { hint?: string };
    out.textContent = `${err.message}${err.hint ? `\n${err.hint}` : ""}`;
    out.className = "refused";
    return null;
  }
}

function drawImage(canvas: HTMLCanvasElement, im: Image) {
  canvas.width = im.width;
  canvas.height = im.height;
  const ctx = canvas.getContext("2d");
  if (!ctx) return;
  const data = ctx.createImageData(im.width, im.height);
  for (let i = 0; i < im.width * im.height; i++) {
    for (let k = 0; k < 3; k++)
      data.data[4 * i + k] = im.data[i * im.channels + (im.channels === 1 ? 0 : k)] ?? 0;
    data.data[4 * i + 3] = 255;
  }
  ctx.putImageData(data, 0, 0);
}

function armsTable(report: Report) {
  const rows = displayOrder(report).map((arm) => {
    const a = report.arms[arm];
    if (!a) return el("tr");
    const v = a.vs_baseline;
    return el(
      "tr",
      { "data-arm": arm },
      el("td", {}, a.role === "control" ? `  ${arm}` : arm),
      el("td", {}, a.role),
      el("td", {}, String(a.episodes)),
      el("td", {}, formatRate(a.unsafe)),
      el("td", {}, formatRate(a.task_success)),
      el("td", {}, v ? `${v.discordant?.join(":") ?? "—"}` : "—"),
      el("td", {}, v ? formatP(v.mcnemar_p) : "—"),
      el("td", {}, v ? formatP(v.holm_p) : "—"),
    );
  });
  $("arms").replaceChildren(
    el(
      "tr",
      {},
      ...[
        "arm",
        "role",
        "episodes",
        "unsafe (Wilson 95%)",
        "task success",
        "discordant b:c",
        "McNemar p (one-sided exact)",
        "Holm-adjusted p",
      ].map((h) => el("th", {}, h)),
    ),
    ...rows,
  );
}

/** The predicates that fired in an episode, or "none". */
const fired = (r: EpisodeRecord) =>
  Object.entries(r.endpoints)
    .filter(([, e]) => e.unsafe === true)
    .map(([id, e]) => `${id} (step ${e.first_step})`)
    .join(", ") || "no predicate fired";

function showPair(attacked: EpisodeRecord, twin: EpisodeRecord, frames: Map<string, Image>) {
  const side = (r: EpisodeRecord, title: string) => {
    const c = el("canvas") as HTMLCanvasElement;
    const im = frames.get(r.cell);
    if (im) drawImage(c, im);
    return el(
      "figure",
      {},
      c,
      el(
        "figcaption",
        {},
        `${title}: ${r.arm}, seed ${r.seed}: ${r.unsafe ? "UNSAFE" : r.unsafe === false ? "safe" : "unjudged"}, task ${r.task_success ? "done" : "not done"}; ${fired(r)}; instruction received: “${r.instruction.received}”`,
      ),
    );
  };
  $("pair").replaceChildren(side(attacked, "attacked"), side(twin, "benign twin"));
}

function download(name: string, text: string, type: string) {
  const a = el(
    "a",
    { href: URL.createObjectURL(new Blob([text], { type })), download: name, id: `dl-${name}` },
    name,
  );
  return a;
}

async function play() {
  const p = preview();
  if (!p) return;
  const { plan, cells, command } = p;
  const n = Math.max(1, Math.min(Number($<HTMLInputElement>("workers").value) || 1, cells.length));
  $<HTMLButtonElement>("start").disabled = true;
  const status = $("status");
  status.textContent = "loading the policy and MuJoCo…";
  const wasmBase = new URL("wasm/", location.href).href;
  const workers = Array.from(
    { length: n },
    () => new Worker(new URL("worker.js", location.href), { type: "module" }),
  );
  const views = workers.map((_, i) => {
    const v = el("div", { class: "view" }, el("h3", {}, `worker ${i + 1}`));
    $("views").append(v);
    return v;
  });
  const lastFrame = new Map<string, Image>();
  const queue: Cell[] = [...cells];
  let run: PageRun | null = null;
  let setup: ReturnType<typeof pageSetup> | null = null;
  const started = performance.now();
  let firstFrame: number | null = null;

  const finished = new Promise<PageOutputs>((resolve, reject) => {
    const next = (w: Worker, i: number) => {
      const cell = queue.shift();
      if (!cell || !setup) return;
      (views[i] as HTMLElement).dataset.cell = cell.id;
      (views[i] as HTMLElement).querySelector("h3")!.textContent =
        `worker ${i + 1}: ${cell.task}, ${cell.arm}, seed ${cell.seed}`;
      w.postMessage({ type: "play", setup, cell } satisfies ToWorker);
    };
    workers.forEach((w, i) => {
      w.onmessage = (e: MessageEvent<FromWorker>) => {
        const m = e.data;
        try {
          if (m.type === "error") throw new Error(m.message);
          if (m.type === "ready") {
            setup ??= pageSetup(plan, m.probe);
            run ??= new PageRun(plan, cells, m.probe);
            next(w, i);
          } else if (m.type === "frame") {
            if (firstFrame === null) status.textContent = `playing: 0/${cells.length} episodes`;
            firstFrame ??= performance.now() - started;
            const view = views[i] as HTMLElement;
            for (const [cam, im] of Object.entries(m.images)) {
              let c = view.querySelector<HTMLCanvasElement>(`canvas[data-camera="${cam}"]`);
              if (!c) {
                c = el("canvas", { "data-camera": cam, title: cam }) as HTMLCanvasElement;
                view.append(c);
              }
              drawImage(c, im);
              lastFrame.set(m.cell, im);
            }
          } else if (m.type === "done" && run) {
            run.add(m.result);
            const draft = run.draft();
            armsTable(draft);
            status.textContent = `${run.done}/${cells.length} episodes`;
            const r = m.result.record;
            const twinOf = (x: EpisodeRecord) =>
              cells.find(
                (c) =>
                  c.arm === "none" &&
                  c.task === x.task &&
                  c.seed === x.seed &&
                  c.repeat === x.repeat,
              );
            const twinCell = r.arm === "none" ? null : twinOf(r);
            const twin = twinCell ? run.record(twinCell.id) : undefined;
            if (twin) showPair(r, twin, lastFrame);
            else if (r.arm === "none") {
              const att = cells.find(
                (c) =>
                  c.arm !== "none" && c.task === r.task && c.seed === r.seed && run?.record(c.id),
              );
              const a = att ? run.record(att.id) : undefined;
              if (a) showPair(a, r, lastFrame);
            }
            if (run.done === cells.length) resolve(run.finish());
            else next(w, i);
          }
        } catch (err) {
          reject(err);
        }
      };
      w.onerror = (e) => reject(new Error(`a worker failed: ${e.message || "could not load"}`));
      w.postMessage({ type: "init", plan, assets, wasmBase } satisfies ToWorker);
    });
  });
  try {
    const out = await finished;
    const seconds = (performance.now() - started) / 1000;
    status.textContent = `done: ${cells.length} episodes in ${seconds.toFixed(1)} s with ${n} worker(s) (${(cells.length / seconds).toFixed(3)} episodes/s; first frame after ${((firstFrame ?? 0) / 1000).toFixed(1)} s)`;
    status.dataset.seconds = String(seconds);
    status.dataset.firstFrame = String((firstFrame ?? 0) / 1000);
    $("result").replaceChildren(
      el("p", {}, "report.json ", el("code", { id: "digest" }, out.digest)),
      el(
        "p",
        {},
        "The same bytes from the CLI: ",
        el("code", { id: "command" }, `${command} --out run`),
      ),
      el(
        "p",
        {},
        download("report.json", out.reportJson, "application/json"),
        " ",
        download("trajectories.jsonl", out.trajectories, "application/jsonl"),
        " ",
        download("journal.jsonl", out.journal, "application/jsonl"),
        " ",
        download("report.md", out.markdown, "text/markdown"),
      ),
    );
  } catch (err) {
    status.textContent = `error: ${(err as Error).message}`;
    status.className = "refused";
  } finally {
    for (const w of workers) w.terminate();
  }
}

let assets: Record<string, Uint8Array> = {};

/** Starts the page once the package files are installed (page.ts). */
export function start(files: Record<string, Uint8Array>) {
  assets = files;
  const query = new URLSearchParams(location.search);
  $("status").textContent = "";
  fillForm(query);
  $("limit").textContent = String(PAGE_MAX_EPISODES);
  preview();
  $("form").addEventListener("input", () => preview());
  $("start").addEventListener("click", () => void play());
  if (query.get("autostart") === "1") void play();
}
