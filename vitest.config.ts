import { defineConfig } from "vitest/config";
import SlowestFirst from "./test/support/sequencer.js";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    // Removes the temporary directories each test file made (test/support/tmp.ts).
    setupFiles: ["test/support/cleanup.ts"],
    // Physics and e2e tests spawn processes; keep the pool small for 2-core machines.
    pool: "forks",
    maxWorkers: 2,
    // The slowest files start first, so that the two workers finish together.
    sequence: { sequencer: SlowestFirst },
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
