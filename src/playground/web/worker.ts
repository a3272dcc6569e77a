/**
 * A Web Worker of the playground: installs the package files the page fetched, loads the policy
 * and opens the suite once (a `Player`), then plays the cells the page sends, posting what the
 * policy saw as it plays and each finished episode.
 */
import { installAssets } from "../../core/assets.browser.js";
import { setWasmBase } from "../../policies/tiny-vla/backend.browser.js";
import type { Player } from "../player.js";
import type { FromWorker, ToWorker } from "./protocol.js";

/** Every how many steps the page is sent a frame (enough to watch, cheap to copy). */
const FRAME_EVERY = 4;

/** The worker's global scope, as far as it is used here (the lib is Node's, not the DOM's). */
const scope = globalThis as unknown as {
  postMessage(m: FromWorker): void;
  onmessage: ((e: { data: ToWorker }) => void) | null;
};
const post = (m: FromWorker) => scope.postMessage(m);
let player: Promise<Player> | null = null;

scope.onmessage = async (e) => {
  const m = e.data;
  try {
    if (m.type === "init") {
      installAssets(m.assets);
      setWasmBase(m.wasmBase);
      // Loaded after the files are installed: the suites read their MJCF as they load.
      player = import("../player.js").then(({ Player }) => Player.open(m.plan));
      post({ type: "ready", probe: (await player).probe() });
    } else {
      if (!player) throw new Error("play before init");
      const p = await player;
      const result = await p.play(m.setup, m.cell, (f) => {
        if (f.step % FRAME_EVERY === 0) post({ type: "frame", cell: m.cell.id, ...f });
      });
      post({ type: "done", result });
    }
  } catch (err) {
    post({ type: "error", message: err instanceof Error ? err.message : String(err) });
  }
};
