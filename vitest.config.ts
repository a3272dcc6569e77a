import { defineConfig } from "vitest/config";
import SlowestFirst from "./test/support/sequencer.js";

/**
 * Test files that load plugins into the registries or mock modules: they run in a process of
 * their own, so that what they register or mock never reaches another file.
 */
const OWN_PROCESS = [
  "src/config/plugins.test.ts",
  "src/config/recipes.test.ts",
  "src/cli/commands.test.ts",
  "src/offline/train-tiny-vla.test.ts",
  "src/report/showcase-clip.test.ts",
  "test/contract/defenses.test.ts",
  "test/e2e/plugins.test.ts",
  "test/readme-examples.test.ts",
];

export default defineConfig({
  test: {
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
    projects: [
      {
        extends: true,
        test: {
          name: "shared",
          include: ["src/**/*.test.ts", "test/**/*.test.ts"],
          exclude: OWN_PROCESS,
          // Test files share their worker process and its modules: isolated, each of the ~190
          // files imported the library (zod schemas, registries, tfjs, MuJoCo) afresh, which was
          // more than half the CPU of the unit tests (`vitest run src`: 275 s of CPU isolated,
          // 124 s not, on the same loaded machine). Such a file leaves no global state behind.
          isolate: false,
        },
      },
      { extends: true, test: { name: "own-process", include: OWN_PROCESS, isolate: true } },
    ],
  },
});
