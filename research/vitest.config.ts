import { defineConfig } from "vitest/config";

/** The research probes' own tests: `npx vitest run --config research/vitest.config.ts`. */
export default defineConfig({
  test: {
    include: ["research/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    setupFiles: ["test/support/cleanup.ts"],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
