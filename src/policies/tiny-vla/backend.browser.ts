/**
 * The browser twin of `backend.ts` (same exports, plus where the page serves the WASM files):
 * TensorFlow.js on its WASM backend, single-threaded as in Node, so that a page computes the
 * actions the CLI computes. The bundle swaps this file in for `backend.ts`.
 */
import type * as tf from "@tensorflow/tfjs";
import { ProvaelError } from "../../core/errors.js";

let ready: Promise<typeof tf> | undefined;
let wasmBase = "wasm/";

/** Where the page serves tfjs-backend-wasm's `.wasm` files (a URL ending in `/`). */
export function setWasmBase(url: string): void {
  wasmBase = url;
}

export function tfReady(): Promise<typeof tf> {
  ready ??= (async () => {
    try {
      const tf = await import("@tensorflow/tfjs");
      const wasm = await import("@tensorflow/tfjs-backend-wasm");
      wasm.setWasmPaths(wasmBase);
      // Threads would change reduction order; determinism matters more than speed here.
      wasm.setThreadsCount(1);
      const ok = await tf.setBackend("wasm");
      if (!ok) throw new Error("tf.setBackend('wasm') returned false");
      await tf.ready();
      return tf;
    } catch (e) {
      ready = undefined;
      throw new ProvaelError("policy/load", "cannot start the TensorFlow.js WASM backend", {
        cause: e,
        hint: `the page serves tfjs-backend-wasm's .wasm files under ${wasmBase}`,
      });
    }
  })();
  return ready;
}

export type { tf };
