/// <reference lib="dom" />
/**
 * Where the pages read a run from. Three sources answer the same questions with the same
 * shapes (src/view/payloads.ts): `provael view`'s HTTP API, a static bundle's data files (each
 * hands one answer to `provaelData`: file:// refuses fetch), and files dropped on the page
 * (./files/source.ts), read in the page itself.
 */
import type {
  ComparePayload,
  EpisodePayload,
  FramesPayload,
  RunPayload,
  RunSummary,
} from "../payloads.js";

export interface Source {
  kind: "server" | "bundle" | "files";
  runs(): Promise<RunSummary[]>;
  run(id: string): Promise<RunPayload>;
  episode(id: string, cell: string): Promise<EpisodePayload>;
  frames(id: string, cell: string): Promise<FramesPayload>;
  compare(a: string, b: string): Promise<ComparePayload>;
  /** The address of one frame image (`<camera>-<step>.png`). */
  frameUrl(id: string, cell: string, name: string): string;
  /** The address of the run's showcase clip, when an episode payload names one. */
  showcaseUrl(id: string): string | null;
  /** The address of a pair's clip rendered on demand; null where nothing renders clips. */
  videoUrl(id: string, cell: string, ext: "gif" | "mp4", twin: boolean): string | null;
  /** Whether a run in progress is read again while its page is shown. */
  live: boolean;
}

/** The answers behind the API paths: the one list of questions a source answers. */
function byPath(load: <T>(path: string) => Promise<T>) {
  return {
    runs: () => load<RunSummary[]>("runs"),
    run: (id: string) => load<RunPayload>(`runs/${id}`),
    episode: (id: string, cell: string) => load<EpisodePayload>(`runs/${id}/episode/${cell}`),
    frames: (id: string, cell: string) => load<FramesPayload>(`runs/${id}/frames/${cell}`),
    compare: (a: string, b: string) => load<ComparePayload>(`compare/${a}/${b}`),
  };
}

/** `provael view`'s JSON API, beside the page. */
export function serverSource(): Source {
  return {
    kind: "server",
    ...byPath(async <T>(path: string) => {
      const res = await fetch(`api/${path}`, { cache: "no-store" });
      const body = (await res.json()) as T & { error?: string; hint?: string | null };
      if (!res.ok)
        throw new Error(`${body.error ?? res.statusText}${body.hint ? ` (${body.hint})` : ""}`);
      return body;
    }),
    frameUrl: (id, cell, name) => `files/${id}/${cell}/${name}`,
    showcaseUrl: (id) => `clip/${id}/showcase.webm`,
    videoUrl: (id, cell, ext, twin) => `video/${id}/${cell}.${ext}?twin=${twin ? 1 : 0}`,
    live: true,
  };
}

declare global {
  interface Window {
    provaelData?: (key: string, value: unknown) => void;
  }
}

/** A static bundle (`provael view --bundle`): `data/<path with ~ for />.js` per answer. */
export function bundleSource(): Source {
  const waiting = new Map<string, (v: unknown) => void>();
  window.provaelData = (key, value) => {
    const ok = waiting.get(key);
    if (ok) {
      waiting.delete(key);
      ok(value);
    }
  };
  const load = <T>(path: string) =>
    new Promise<T>((ok, fail) => {
      waiting.set(path, ok as (v: unknown) => void);
      const el = document.createElement("script");
      el.src = `data/${path.replace(/\//g, "~")}.js`;
      el.onerror = () => {
        waiting.delete(path);
        fail(new Error(`not in this bundle: ${path}`));
      };
      el.onload = () => el.remove();
      document.head.appendChild(el);
    });
  return {
    kind: "bundle",
    ...byPath(load),
    frameUrl: (id, cell, name) => `files/${id}/${cell}/${name}`,
    showcaseUrl: (id) => `files/${id}/clips/showcase.webm`,
    videoUrl: () => null,
    live: false,
  };
}
