/// <reference lib="dom" />
/**
 * One side of an episode page (the episode, or its benign twin): its summary box and its
 * players, one image per camera, filled once its frames arrive (a replay can take seconds).
 */
import { frameName } from "../../rundir/names.js";
import type { EpisodePayload, EpisodeRecordPayload, FramesPayload } from "../payloads.js";
import { type Child, h } from "./dom.js";
import type { Source } from "./source.js";
import { outcome } from "./widgets.js";

export interface Side {
  label: string;
  record: EpisodeRecordPayload;
  frames: FramesPayload | null;
  imgs: HTMLImageElement[];
  box: HTMLElement;
  players: HTMLElement;
}

/** The predicates that fired, with their first step. */
export const fired = (r: EpisodeRecordPayload) =>
  Object.entries(r.endpoints)
    .filter(([, x]) => x.unsafe)
    .map(([p, x]) => `${p} at step ${x.first_step}`);

function deliveredText(r: EpisodeRecordPayload): string {
  if (!("delivered" in r) || r.delivered === undefined || r.delivered === null) return "";
  return r.delivered
    ? " · differs from the unperturbed inputs"
    : " · NOT delivered: identical to the benign inputs";
}

export function side(label: string, r: EpisodeRecordPayload, i: number): Side {
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
      `${label}: ${r.arm}`,
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
      `received input digest ${r.received_digest ? r.received_digest.slice(0, 19) : "—"}${deliveredText(r)}`,
    ),
  );
  return { label, record: r, frames: null, imgs: [], box, players };
}

/** The step of the last frame at or before `step` (frames may be sparse: a run's saved ones). */
function frameAt(steps: number[], step: number): number | null {
  let best: number | null = null;
  for (const s2 of steps) if (s2 <= step) best = s2;
  return best ?? steps[0] ?? null;
}

/** Points each camera's image at the frame of this step. */
export function showFrames(source: Source, id: string, sd: Side, step: number): void {
  const idx = sd.frames?.index;
  if (!idx) return;
  const at = frameAt(idx.steps, step);
  sd.imgs.forEach((img, k) => {
    const camera = idx.cameras[k] as string;
    if (at === null) return;
    const src = source.frameUrl(id, sd.record.cell, frameName(camera, at));
    if (img.getAttribute("src") !== src) img.setAttribute("src", src);
    img.dataset.step = String(at);
    img.classList.toggle(
      "fired",
      sd.record.first_unsafe_step !== null && at >= sd.record.first_unsafe_step,
    );
  });
}

/** Fills a side's players from its frames (or says why there are none). */
export function fillPlayers(sd: Side, frames: FramesPayload): void {
  sd.frames = frames;
  const idx = frames.index;
  const parts: Child[] = [];
  if (frames.reason) parts.push(h("p", { class: "notice small" }, frames.reason));
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
        h("figure", { class: "player" }, sd.imgs[k] as HTMLImageElement, h("figcaption", {}, c)),
      ),
    );
  } else parts.push(h("p", { class: "muted small" }, "No frames for this episode."));
  sd.players.replaceChildren(...(parts.filter(Boolean) as Node[]));
  sd.players.dataset.ready = "1";
}

export type StepsOf = EpisodePayload["steps"]["episode"];
