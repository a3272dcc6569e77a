/// <reference lib="dom" />
/**
 * The per-step timeline: one track per endpoint (red unsafe, green safe, grey unjudged), a head
 * at the current step, a click seeks; and a side's largest contact force per step.
 */
import type { FramesIndex } from "../../rundir/schema/index.js";
import { h, s } from "./dom.js";

export interface Timeline {
  el: HTMLElement;
  track(label: string, values: (boolean | null | undefined)[], mark: string): void;
  /** Each predicate's own track and the contact force, from a replay's judgements. */
  replayed(label: string, side: number, timeline: NonNullable<FramesIndex["timeline"]>): void;
  show(step: number): void;
}

export function timeline(horizon: number, seek: (step: number) => void): Timeline {
  const el = h("div", { class: "timeline", id: "timeline" });
  const heads: HTMLElement[] = [];
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
      seek(Math.floor(((e.clientX - r.left) / r.width) * horizon));
    });
    el.append(h("div", {}, label), t);
  };
  const force = (label: string, tl: NonNullable<FramesIndex["timeline"]>) => {
    const forces = tl.map((t) => t.max_force);
    if (!forces.some((x) => x !== null && x > 0)) return;
    const maxF = Math.max(...forces.map((x) => x ?? 0), 1);
    const sv = s("svg", {
      width: "100%",
      height: 30,
      viewBox: `0 0 ${horizon} 30`,
      preserveAspectRatio: "none",
    });
    sv.append(
      s("polyline", {
        points: tl.map((t) => `${t.step + 0.5},${30 - ((t.max_force ?? 0) / maxF) * 28}`).join(" "),
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
    el.append(h("div", {}, `${label}: contact force (max ${maxF.toFixed(1)} N)`), wrap);
  };
  return {
    el,
    track,
    replayed(label, side, tl) {
      const ids = [...new Set(tl.flatMap((t) => Object.keys(t.predicates)))].sort();
      for (const p of ids) {
        const v: (boolean | null)[] = [];
        for (const t of tl) {
          const j = t.predicates[p];
          v[t.step] = j ? (j.judged ? j.unsafe : null) : null;
        }
        track(`${label}: ${p}`, v, `${side}-${p}`);
      }
      force(label, tl);
    },
    show(step) {
      for (const hd of heads) hd.style.left = `${((step + 0.5) / horizon) * 100}%`;
    },
  };
}
