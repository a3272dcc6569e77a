/**
 * TensorFlow.js on its WASM backend, single-threaded, initialised once per process. One thread
 * keeps summation order fixed, so the same seed gives bit-identical weights and actions.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type * as tf from "@tensorflow/tfjs";
import { ProvaelError } from "../../core/errors.js";

let ready: Promise<typeof tf> | undefined;

/**
 * The tfjs module with the WASM backend active (idempotent). Imported here, on first use, so
 * that commands which never run the model (version, list-*, report) do not pay for loading it.
 */
export function tfReady(): Promise<typeof tf> {
  ready ??= (async () => {
    try {
      const tf = await import("@tensorflow/tfjs");
      const wasm = await import("@tensorflow/tfjs-backend-wasm");
      const require = createRequire(import.meta.url);
      const dist = dirname(require.resolve("@tensorflow/tfjs-backend-wasm"));
      wasm.setWasmPaths(`${join(dist)}/`);
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
        hint: "is @tensorflow/tfjs-backend-wasm installed with its .wasm files?",
      });
    }
  })();
  return ready;
}

export type { tf };
