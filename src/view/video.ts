/**
 * Clips of replayed episodes for `provael video` and the viewer's downloads: the replayed frames
 * (PNG files of the cache or the run) handed to the one clip encoder, src/report/clip.ts, which
 * also makes the clip report.html embeds.
 */
import { readFileSync } from "node:fs";
import { decodePng } from "../core/png.js";
import {
  type ClipOptions,
  type ClipResult,
  type ClipRow,
  renderClip as encodeClip,
} from "../report/clip.js";
import { checkOutputFile } from "../rundir/files.js";
import { type FramesIndex, frameName } from "../rundir/schema/index.js";

export type { ClipFormat, ClipResult } from "../report/clip.js";
export { clipFormat, findFont } from "../report/clip.js";

/** One episode of a clip, its frames as the viewer has them. */
export interface ReplayedRow {
  label: string;
  index: FramesIndex;
  /** The file of one frame of this episode. */
  file: (name: string) => string;
  firstUnsafe: number | null;
  fired: string[];
}

/** A replayed episode as the encoder's row: frames decoded from their PNG files on demand. */
export function rowOf(r: ReplayedRow): ClipRow {
  return {
    label: r.label,
    cameras: r.index.cameras,
    steps: r.index.steps,
    frame: (camera, step) => {
      try {
        return decodePng(readFileSync(r.file(frameName(camera, step))));
      } catch {
        return null;
      }
    },
    firstUnsafe: r.firstUnsafe,
    fired: r.fired,
  };
}

/** Renders the clip of replayed episodes to `--out` (never over a run's own file). */
export async function renderClip(
  rows: ReplayedRow[],
  options: Omit<ClipOptions, "every">,
): Promise<ClipResult> {
  checkOutputFile(options.out, "--out");
  return encodeClip(rows.map(rowOf), options);
}
