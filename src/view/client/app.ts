/// <reference lib="dom" />
/**
 * The entry of the page `provael view` serves and `--bundle` writes (src/view/page.ts inlines
 * its bundle): the pages read the server's API, or a bundle's data files.
 */

import { pages } from "./pages.js";
import { startRouter } from "./router.js";
import { bundleSource, serverSource } from "./source.js";

declare global {
  interface Window {
    PROVAEL: { mode: "server" | "bundle"; version: string };
  }
}

const route = startRouter(
  window.PROVAEL.mode === "server" ? serverSource() : bundleSource(),
  pages,
);
window.addEventListener("DOMContentLoaded", route);
