/**
 * The order test files start in. Two workers finish together only if the longest files start
 * first: a 70 s file that starts last is 70 s of one idle worker. Vitest orders by the durations
 * it cached from the last run, and with no cache (a fresh clone, CI) by file size, which puts
 * short files with long physics episodes (the backdoor screen, the convention probe) at the end.
 * The files below are the slowest, measured in a full `npm test` on a shared, loaded 2-core
 * machine (`npx vitest run --reporter=json`: only their order matters; a file whose plans were
 * shrunk since has its figure scaled by its CPU time after over before); they start first,
 * longest first, and every other file follows in Vitest's own order. A file missing from the
 * list only starts later, nothing else.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Seconds each file took in that run; only the order matters. */
export const SLOWEST: Record<string, number> = {
  "test/e2e/durability.test.ts": 732,
  "test/e2e/cli.test.ts": 591,
  "test/e2e/gate.test.ts": 472,
  "test/e2e/offline-study.test.ts": 452,
  "test/e2e/served.test.ts": 434,
  "test/e2e/first-hour.test.ts": 324,
  "test/e2e/scale-templates.test.ts": 305,
  "test/e2e/tabletop.test.ts": 266,
  "test/integration/backdoor-screen.test.ts": 261,
  "test/e2e/evidence.test.ts": 246,
  "test/e2e/dry-run.test.ts": 245,
  "test/e2e/bridge.test.ts": 206,
  "test/e2e/benchmark-launch.test.ts": 194,
  "test/e2e/probe-conventions.test.ts": 191,
  "test/e2e/next-steps.test.ts": 165,
  "test/e2e/replay.test.ts": 146,
  "test/e2e/slurm.test.ts": 115,
  "test/integration/stop-while-finalising.test.ts": 107,
  "test/e2e/view.test.ts": 101,
  "test/e2e/record-options.test.ts": 82,
  "test/integration/shards.test.ts": 82,
  "test/integration/served-pool.test.ts": 81,
  "test/integration/served.test.ts": 81,
  "src/offline/record.test.ts": 80,
};

export default class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rest = await super.sort(files);
    const root = `${this.ctx.config.root}/`;
    const seconds = (f: TestSpecification) => SLOWEST[f.moduleId.replace(root, "")] ?? 0;
    const known = rest.filter((f) => seconds(f) > 0).sort((a, b) => seconds(b) - seconds(a));
    return [...known, ...rest.filter((f) => seconds(f) === 0)];
  }
}
