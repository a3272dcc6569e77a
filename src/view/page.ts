/**
 * The viewer's one page: HTML, inline CSS and the inline app script (src/view/client/app.ts and
 * the pages it imports, bundled by rolldown at `npm run build` into dist/view/client/app.js, a
 * classic script). Inline so that a bundle opens from file:// (module scripts and fetch are
 * refused there) and the server needs no static folder. No CDN, no network.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ProvaelError } from "../core/errors.js";
import { PACKAGE_ROOT } from "../core/package-root.js";
import { VIEW_CSS } from "./style.js";

/** The bundled app script; tests running from src/ use the build too (see test/support). */
export const APP_FILE = join(PACKAGE_ROOT, "dist", "view", "client", "app.js");

let script: string | null = null;

function appScript(): string {
  if (script !== null) return script;
  let text: string;
  try {
    text = readFileSync(APP_FILE, "utf8");
  } catch (e) {
    throw new ProvaelError("internal/invariant", `the viewer app is not built (${APP_FILE})`, {
      cause: e,
      hint: "run `npm run build`",
    });
  }
  // Inside a <script> element: no text may close it.
  script = text.replace(/<\/script/gi, "<\\/script");
  return script;
}

export interface PageOptions {
  mode: "server" | "bundle";
  version: string;
}

export function appPage(options: PageOptions): string {
  const config = JSON.stringify({ mode: options.mode, version: options.version }).replace(
    /</g,
    "\\u003c",
  );
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Provael viewer</title>
<link rel="icon" href="data:,">
<style>${VIEW_CSS}</style>
</head>
<body>
<header class="top"><a href="#/" class="brand">Provael</a><nav id="crumbs"></nav><span class="version">v${options.version}${options.mode === "bundle" ? " · static bundle" : ""}</span></header>
<main id="app"><p class="muted">Loading…</p></main>
<script>window.PROVAEL = ${config};</script>
<script>${appScript()}</script>
</body>
</html>
`;
}
