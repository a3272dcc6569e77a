import { describe, expect, it } from "vitest";
import { tfReady } from "./backend.js";

describe("the TensorFlow.js WASM backend", () => {
  it("leaves the process's handling of uncaught errors as it found it", async () => {
    const events = ["uncaughtException", "unhandledRejection"] as const;
    const before = events.map((e) => process.listeners(e as "uncaughtException").slice());
    const tf = await tfReady();
    expect(tf.getBackend()).toBe("wasm");
    // The module's loader adds handlers that rethrow (exit 7 for any uncaught error); gone.
    events.forEach((e, i) => {
      expect(process.listeners(e as "uncaughtException")).toEqual(before[i]);
    });
  });
});
