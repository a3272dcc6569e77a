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
    const before = processHandlers();
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
      dropAddedHandlers(before);
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

const FATAL_EVENTS = ["uncaughtException", "unhandledRejection"] as const;

type Listener = (...args: unknown[]) => void;
const listenersOf = (e: string): Listener[] =>
  (process as NodeJS.EventEmitter).listeners(e) as Listener[];

function processHandlers(): Map<string, Set<Listener>> {
  return new Map(FATAL_EVENTS.map((e) => [e, new Set(listenersOf(e))]));
}

/**
 * The WASM module's loader registers process-wide handlers for uncaught errors that rethrow
 * them, and a handler that throws makes Node exit 7 with a stack inside the backend: any
 * unrelated uncaught error of the process would then read as a TensorFlow.js crash. The module
 * never exits on its own (no `ExitStatus` to catch), so Node's own handling is restored.
 */
function dropAddedHandlers(before: Map<string, Set<Listener>>): void {
  for (const e of FATAL_EVENTS) {
    for (const h of listenersOf(e)) {
      if (!before.get(e)?.has(h)) (process as NodeJS.EventEmitter).off(e, h);
    }
  }
}

export type { tf };
