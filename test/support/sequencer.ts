/**
 * The order test files start in. Two workers finish together only if the longest files start
 * first: a 70 s file that starts last is 70 s of one idle worker. Vitest orders by the durations
 * it cached from the last run, and with no cache (a fresh clone, CI) by file size, which puts
 * short files with long physics episodes (the backdoor screen, the convention probe) at the end.
 * The files below are the slowest, measured on 2 cores (`npx vitest run --reporter=json`); they
 * start first, longest first, and every other file follows in Vitest's own order. A file missing
 * from the list only starts later, nothing else.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Seconds each file took in a full `npm test` on 2 cores; only the order matters. */
export const SLOWEST: Record<string, number> = {
  "test/e2e/durability.test.ts": 91,
  "test/e2e/cli.test.ts": 90,
  "test/integration/backdoor-screen.test.ts": 82,
  "test/e2e/probe-conventions.test.ts": 70,
  "test/e2e/gate.test.ts": 64,
  "test/e2e/evidence.test.ts": 56,
  "test/e2e/first-hour.test.ts": 55,
  "test/e2e/served.test.ts": 49,
  "test/e2e/scale-templates.test.ts": 41,
  "test/e2e/offline-study.test.ts": 40,
  "test/e2e/view.test.ts": 39,
  "test/e2e/slurm.test.ts": 33,
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
