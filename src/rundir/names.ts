/**
 * The names inside a run directory, and the shape of a cell id. Browser-safe (no file system):
 * the page that opens dropped run directories reads them by these names too.
 */

export const RUN_FILES = {
  journal: "journal.jsonl",
  report: "report.json",
  markdown: "report.md",
  html: "report.html",
  trajectories: "trajectories.jsonl",
  manifest: "execution-manifest.json",
  frames: "frames",
  /** The clip report.html embeds, and what it shows (src/report/showcase-clip.ts). */
  clips: "clips",
  showcaseClip: "clips/showcase.webm",
  showcaseClipInfo: "clips/showcase.json",
  /** A bridged run's refusals: one JSON line per ERROR the bridge answered (src/bridge/refusal.ts). */
  refusals: "refusals.jsonl",
  /** What the regression gate (`provael report --baseline`) writes beside the report. */
  regression: "regression.json",
  regressionMarkdown: "regression.md",
  regressionSarif: "regression.sarif",
} as const;

/** A cell id as `cellId` makes it: `c` and 20 hex digits. Anything else never names a path. */
export const CELL_ID = /^c[0-9a-f]{20}$/;

/**
 * How many characters of a cell id the viewer's episode table shows ('c' and 8 hex digits): the
 * shortest prefix an episode id may be given by (src/rundir/cell-id.ts).
 */
export const SHOWN_CELL_CHARS = 9;

/** A frame's file name, `<camera>-<step>.png`, the step zero-padded to four digits. */
export const FRAME_FILE = /^([A-Za-z0-9_]+)-(\d{4,})\.png$/;

export const frameName = (camera: string, step: number) =>
  `${camera}-${String(step).padStart(4, "0")}.png`;
