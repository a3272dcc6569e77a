/**
 * The Web Worker that replays episodes for the page that opens run directories: built with the
 * playground (its browser modules, MuJoCo in WebAssembly) and served beside it, so the page
 * finds it only in a playground site (`viewer/open.html`). It fetches the scenes from the site
 * (assets/files.json lists them), installs them, then replays one episode at a time.
 */
import { installAssets } from "../../../core/assets.browser.js";
import type { ReplayReply, ReplayRequest } from "./protocol.js";

/** The worker's global scope, as far as it is used here. */
const scope = globalThis as unknown as {
  location: { href: string };
  postMessage(m: ReplayReply): void;
  onmessage: ((e: { data: ReplayRequest }) => void) | null;
};

/** The package files a replay reads: the MuJoCo scenes (no policy is loaded). */
const SCENES = "assets/mujoco/";

async function load(): Promise<typeof import("./play.js")> {
  const site = new URL(".", scope.location.href);
  const listed = (await (await fetch(new URL("assets/files.json", site))).json()) as string[];
  const assets: Record<string, Uint8Array> = {};
  await Promise.all(
    listed
      .filter((f) => f.startsWith(SCENES))
      .map(async (f) => {
        assets[f] = new Uint8Array(await (await fetch(new URL(f, site))).arrayBuffer());
      }),
  );
  installAssets(assets);
  return import("./play.js");
}

let loaded: ReturnType<typeof load> | null = null;
// One episode at a time: the suite instances are shared.
let queue: Promise<void> = Promise.resolve();

scope.onmessage = (e) => {
  const m = e.data;
  queue = queue.then(async () => {
    try {
      loaded ??= load();
      scope.postMessage(await (await loaded).replay(m));
    } catch (err) {
      scope.postMessage({
        type: "error",
        id: m.id,
        message: err instanceof Error ? err.message : String(err),
      });
    }
  });
};
