/// <reference lib="dom" />
/**
 * The pages are routed by the URL's hash, so every view has a link. A page is drawn for one
 * generation of the route: a page whose answer arrives after the route moved on draws nothing,
 * and a run in progress is read again only while its page is still the one shown.
 */
import { app } from "./dom.js";
import type { Source } from "./source.js";

export const POLL_MS = 2000;

/** What a page is drawn with. */
export interface View {
  source: Source;
  gen: number;
  /** Whether the route is still the one this page was drawn for. */
  current(): boolean;
  /** Calls `again` later while the page is still the one shown (a run in progress). */
  again(fn: () => void): void;
}

export interface Pages {
  runs(v: View): Promise<void>;
  run(v: View, id: string, params: URLSearchParams): Promise<void>;
  episode(v: View, id: string, cell: string, params: URLSearchParams): Promise<void>;
  compare(v: View, a: string, b: string): Promise<void>;
}

export function startRouter(source: Source, pages: Pages): () => void {
  let poll: number | null = null;
  let generation = 0;
  const route = () => {
    if (poll !== null) window.clearTimeout(poll);
    poll = null;
    generation += 1;
    const gen = generation;
    // A hash change keeps the document: drop the previous page's readiness marks so nothing (a
    // test, a script) waiting for this page's frames or filters sees the last page's instead.
    delete app().dataset.framesReady;
    delete app().dataset.route;
    const [path = "", query = ""] = location.hash.replace(/^#/, "").split("?");
    const params = new URLSearchParams(query);
    const seg = path.split("/").filter(Boolean).map(decodeURIComponent);
    window.scrollTo(0, 0);
    const v: View = {
      source,
      gen,
      current: () => gen === generation,
      again: (fn) => {
        if (!source.live) return;
        poll = window.setTimeout(() => {
          if (gen === generation) fn();
        }, POLL_MS);
      },
    };
    if (seg[0] === "run" && seg[1] && seg[2] === "episode" && seg[3])
      void pages.episode(v, seg[1], seg[3], params);
    else if (seg[0] === "run" && seg[1]) void pages.run(v, seg[1], params);
    else if (seg[0] === "compare" && seg[1] && seg[2]) void pages.compare(v, seg[1], seg[2]);
    else void pages.runs(v);
  };
  window.addEventListener("hashchange", route);
  return route;
}
