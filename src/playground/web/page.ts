/// <reference lib="dom" />
/**
 * The playground page's entry: fetches the package files the suites and the policy read (MJCF
 * scenes, weights; listed in assets/files.json), installs them, and only then loads the page's
 * modules (app.ts), since the suites read their MJCF as they load.
 */
import { installAssets } from "../../core/assets.browser.js";

async function fetchAssets(): Promise<Record<string, Uint8Array>> {
  const files = (await (await fetch("assets/files.json")).json()) as string[];
  const out: Record<string, Uint8Array> = {};
  await Promise.all(
    files.map(async (f) => {
      out[f] = new Uint8Array(await (await fetch(f)).arrayBuffer());
    }),
  );
  return out;
}

const status = document.getElementById("status") as HTMLElement;
status.textContent = "fetching the scenes and the weights…";
fetchAssets()
  .then(async (assets) => {
    installAssets(assets);
    (await import("./app.js")).start(assets);
  })
  .catch((e: Error) => {
    status.textContent = `error: ${e.message}`;
    status.className = "refused";
  });
