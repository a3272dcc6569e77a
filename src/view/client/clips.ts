/// <reference lib="dom" />
/**
 * What an episode page offers as video: the pair's clip rendered by the server (GIF, MP4), or,
 * where nothing renders clips, the command that does; and the run's own showcase clip (the one
 * report.html embeds) when this episode is its pair.
 */
import type { EpisodePayload } from "../payloads.js";
import { type Child, h } from "./dom.js";
import type { Source } from "./source.js";

export function downloads(source: Source, id: string, data: EpisodePayload): Child[] {
  const cell = data.episode.cell;
  const twin = data.twin !== null;
  const gif = data.replay.possible ? source.videoUrl(id, cell, "gif", twin) : null;
  const mp4 = data.replay.possible ? source.videoUrl(id, cell, "mp4", twin) : null;
  if (gif === null || mp4 === null) {
    const where =
      source.kind === "bundle"
        ? "a static bundle renders no clips"
        : source.kind === "files"
          ? "a page reading local files renders no clips"
          : null;
    return [
      h(
        "span",
        { id: "no-download", class: "muted small" },
        where
          ? `${where}; render this one with provael video --cell ${cell}${twin ? " --twin" : ""} --in RUN --out pair.mp4`
          : `no clip download: ${data.replay.reason ?? "the run cannot be replayed here"}`,
      ),
    ];
  }
  return [
    h("a", { href: gif, id: "download", download: `${cell}.gif` }, "download clip (GIF)"),
    " · ",
    h("a", { href: mp4, download: `${cell}.mp4` }, "MP4"),
  ];
}

export function showcaseClip(source: Source, id: string, data: EpisodePayload): HTMLElement | null {
  const clip = data.showcase_clip;
  const href = clip === null ? null : source.showcaseUrl(id);
  if (clip === null || href === null) return null;
  const moments =
    clip.moments
      .map(
        (m) =>
          `${m.fired.join(", ") || "the predicate"} fired at step ${m.first_unsafe_step} (${m.seconds.toFixed(1)} s)`,
      )
      .join("; ") || "no predicate fired";
  return h(
    "details",
    { id: "showcase-clip-box", class: "small" },
    h("summary", {}, "the run's clip of this pair (report.html's showcase)"),
    h("video", {
      id: "showcase-clip",
      src: href,
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
      `${clip.frames} frames at ${clip.fps} fps${clip.every > 1 ? `, one every ${clip.every} steps` : ""}; ${moments} · `,
      h("a", { href, id: "showcase-clip-link", download: "showcase.webm" }, "WebM"),
    ),
  );
}
