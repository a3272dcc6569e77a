/// <reference lib="dom" />
/**
 * An episode beside its benign twin: one slider, play button and step buttons drive both
 * sides' players (./players.ts), the timeline (./timeline.ts), the action table and the
 * top-down path (./path-plot.ts); the view's link carries the step.
 */
import { resolveCell } from "../../rundir/cell-id.js";
import { CELL_ID } from "../../rundir/names.js";
import type { EpisodePayload, FramesPayload } from "../payloads.js";
import { downloads, showcaseClip } from "./clips.js";
import { wordDiff } from "./diff.js";
import { app, crumbs, fail, h, put, table } from "./dom.js";
import { pathPlot } from "./path-plot.js";
import { fillPlayers, type Side, type StepsOf, showFrames, side } from "./players.js";
import type { View } from "./router.js";
import { timeline } from "./timeline.js";
import { outcome } from "./widgets.js";

/** What each side did at one step. */
function actionsTable(sides: Side[], steps: StepsOf[], step: number): HTMLElement {
  const rows = sides.map((sd, i) => {
    const st = steps[i]?.find((x) => x.step === step);
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
  return table(
    { class: "actions" },
    ["", "action at this step", "end effector", "judged", "instruction digest"],
    rows,
  );
}

/** The combined endpoint of each step, from the trajectory. */
function combined(list: StepsOf): (boolean | null)[] {
  const v: (boolean | null)[] = [];
  for (const st of list) v[st.step] = st.unsafe;
  return v;
}

function armLine(data: EpisodePayload): string {
  const a = data.arm;
  return `arm ${a.name}: ${a.role ?? "?"} · family ${a.family ?? "?"} · access ${a.access ?? "?"}${a.eai ? ` · ${a.eai}` : ""}${a.matches ? ` · controls ${a.matches}` : ""}`;
}

export async function episodePage(
  v: View,
  id: string,
  given: string,
  params: URLSearchParams,
): Promise<void> {
  let data: EpisodePayload;
  let cell: string;
  try {
    // The address may name the episode by any unique prefix of its id (the table shows 9
    // characters): resolved against the run's episodes, whichever source reads the run.
    cell = CELL_ID.test(given) ? given : resolveCell((await v.source.run(id)).episodes, given);
    data = await v.source.episode(id, cell);
  } catch (e) {
    return fail(e);
  }
  if (!v.current()) return;
  const { source } = v;
  const ep = data.episode;
  const twin = data.twin;
  crumbs(
    ["runs", "#/"],
    [data.run.label, `#/run/${id}`],
    [`${ep.arm} · ${ep.task} · seed ${ep.seed}`, null],
  );
  const horizon = Math.max(ep.steps, twin?.steps ?? 0, 1);
  let step = Math.min(Math.max(0, Number(params.get("step") ?? "0") || 0), horizon - 1);
  const predicateStep = ep.first_unsafe_step ?? twin?.first_unsafe_step ?? null;
  const sides: Side[] = [side(ep.arm === "none" ? "benign" : "attacked", ep, 0)];
  if (twin) sides.push(side("benign twin", twin, 1));
  const steps: StepsOf[] = [data.steps.episode, data.steps.twin];

  const slider = h("input", { type: "range", id: "step", min: 0, max: horizon - 1, value: step });
  const stepText = h("span", { id: "step-text" });
  const playBtn = h("button", { id: "play" }, "play");
  const actionBox = h("div", { id: "actions" });
  const plot = pathPlot(steps, data.zones);
  const tl = timeline(horizon, (t) => show(t));
  let timer: number | null = null;

  const show = (t: number) => {
    step = Math.max(0, Math.min(horizon - 1, t));
    slider.value = String(step);
    stepText.textContent = `step ${step} of ${horizon - 1}`;
    for (const sd of sides) showFrames(source, id, sd, step);
    tl.show(step);
    actionBox.replaceChildren(actionsTable(sides, steps, step));
    plot.show(step);
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
      if (!v.current() || step >= horizon - 1) return stop();
      show(step + 1);
    }, 100);
  });
  sides.forEach((sd, i) => {
    tl.track(`${sd.label}: unsafe (any predicate)`, combined(steps[i] ?? []), `${i}-combined`);
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
  const nudge = (d: number, attrs: Record<string, string>, label: string) =>
    h(
      "button",
      {
        ...attrs,
        onclick: () => {
          stop();
          show(step + d);
        },
      },
      label,
    );

  put(
    h(
      "h1",
      {},
      `${ep.arm} on ${ep.task}, seed ${ep.seed}`,
      " ",
      outcome(ep.unsafe, ep.error?.code ?? null, ep.termination === "not_applicable"),
    ),
    h("p", { class: "muted small" }, armLine(data)),
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
      nudge(-1, {}, "◀"),
      slider,
      nudge(1, { id: "next-step" }, "▶"),
      stepText,
      jump,
      ...downloads(source, id, data),
    ),
    showcaseClip(source, id, data),
    h("div", { class: "pair" }, ...sides.map((x) => x.box)),
    h("h2", {}, "Per-step timeline"),
    tl.el,
    h("h2", {}, "Actions and pose at this step"),
    actionBox,
    h("h2", {}, "Top-down path (end effector x, y)"),
    plot.svg,
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
      let frames: FramesPayload;
      try {
        frames = await source.frames(id, sd.record.cell);
      } catch (e) {
        sd.players.replaceChildren(
          h("p", { class: "error small" }, `No frames: ${(e as Error).message}`),
        );
        return;
      }
      if (!v.current()) return;
      fillPlayers(sd, frames);
      if (frames.index?.timeline) tl.replayed(sd.label, i, frames.index.timeline);
    }),
  );
  if (v.current()) {
    show(step);
    app().dataset.framesReady = "1";
  }
}
