/**
 * The page that opens run directories in the browser: `open.html` and its script `open.js`
 * (src/view/client/open.ts, bundled at `npm run build`). Static files only: it works from any
 * static host or from file://, and reads what is dropped on it in the page, sending nothing.
 * `provael view --bundle` writes it beside the bundle's index.html; a site generator copies it
 * with `writeOpenPage`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ProvaelError } from "../core/errors.js";
import { PACKAGE_ROOT, TOOL_VERSION } from "../core/package-root.js";
import { writeFileAtomic } from "../rundir/files.js";
import { VIEW_CSS } from "./style.js";

/** The replay worker's file in a playground site (scripts/build-playground.mjs builds it). */
export const REPLAY_WORKER = "replay.js";

/** The bundled script of the page. */
export const OPEN_SCRIPT = join(PACKAGE_ROOT, "dist", "view", "client", "open.js");

const OPEN_CSS = `
#open { margin:12px 20px 0; padding:12px 16px; border:2px dashed var(--line); border-radius:8px; background:var(--card); }
body.dragging #open { border-color:var(--accent); background:#eef3fb; }
#open p { margin:4px 0; } #open label { margin-right:16px; }
`;

/**
 * The page's HTML. `replayWorker`: the URL of the playground's replay worker, relative to the
 * page, where the page is written into a playground site: episodes of the built-in suites
 * without stored frames are then replayed in the page.
 */
export function openPage(version: string = TOOL_VERSION, replayWorker?: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src 'self' data: blob:; media-src 'self' blob:; style-src 'unsafe-inline'; script-src 'self'; connect-src 'self' blob:; base-uri 'none'; form-action 'none'">
<title>Provael: open a run</title>
<link rel="icon" href="data:,">
<style>${VIEW_CSS}${OPEN_CSS}</style>
</head>
<body${replayWorker ? ` data-replay="${escapeAttr(replayWorker)}"` : ""}>
<header class="top"><a href="#/" class="brand">Provael</a><nav id="crumbs"></nav><span class="version">v${version} · files read in this page</span></header>
<section id="open">
<p><b>Open a run.</b> Drop run directories, their files, or a <code>provael view --bundle</code> folder or zip anywhere on this page, or pick them:
<label>a run directory <input type="file" id="open-dir" webkitdirectory multiple></label>
<label>files or a zip <input type="file" id="open-files" multiple></label></p>
<p class="muted small">The files are read in this page and never leave this machine. Drop two runs of one plan to compare them.</p>
<p id="open-status" class="small" role="status"></p>
</section>
<main id="app"><p class="muted">No run opened yet.</p></main>
<script src="open.js"></script>
</body>
</html>
`;
}

const escapeAttr = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

/**
 * Writes `open.html` and `open.js` into `dir` (which must exist); returns the names written.
 * What a static site (the bundle, the playground) calls to include the page; the playground
 * names its replay worker (`replayWorker`, relative to the page).
 */
export function writeOpenPage(dir: string, options: { replayWorker?: string } = {}): string[] {
  let script: Buffer;
  try {
    script = readFileSync(OPEN_SCRIPT);
  } catch (e) {
    throw new ProvaelError("internal/invariant", `the open page is not built (${OPEN_SCRIPT})`, {
      cause: e,
      hint: "run `npm run build`",
    });
  }
  writeFileAtomic(join(dir, "open.js"), script);
  writeFileAtomic(join(dir, "open.html"), openPage(TOOL_VERSION, options.replayWorker));
  return ["open.html", "open.js"];
}
