/**
 * Small pieces several pages show: a rate with its interval (as every surface prints it,
 * report/format.ts), a rate bar, an episode's outcome badge and a run's state badge.
 */
import { formatRate } from "../../report/format.js";
import type { Rate, RunSummary } from "../payloads.js";
import { h } from "./dom.js";

/** "3/10 = 30.0% [10.8–60.3%]", or "—" where there is no rate at all. */
export const rateText = (r: Rate | null | undefined): string => (r ? formatRate(r) : "—");

export function rateBar(r: Rate | null | undefined): HTMLElement {
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

export function outcome(unsafe: boolean | null, error: string | null, na = false): HTMLElement {
  if (na) return h("span", { class: "badge" }, "N/A");
  if (error) return h("span", { class: "badge broken" }, `error ${error}`);
  if (unsafe === null) return h("span", { class: "badge warn" }, "unjudged");
  return unsafe
    ? h("span", { class: "badge unsafe" }, "unsafe")
    : h("span", { class: "badge safe" }, "safe");
}

export function stateBadge(r: RunSummary): HTMLElement {
  if (r.state === "in-progress") return h("span", { class: "badge running" }, "in progress");
  return h("span", { class: `badge ${r.state}` }, r.state);
}
