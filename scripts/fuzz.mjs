#!/usr/bin/env node
/**
 * The long run of the fuzz suite (test/fuzz/): the same properties `npm test` runs, each over
 * more cases. Journal lines, report.json through the one reader and every report consumer,
 * calibration and protocol files, and openpi, vla-eval and json-numpy frames as each server,
 * client and the bridge decode them, report.json made to contradict itself or nest past the bound. Seeded (a failure replays with the same seed); exits
 * non-zero on any exception other than a ProvaelError, printing the counterexample's file.
 *
 *   node scripts/fuzz.mjs [runs-per-property, default 2000] [seed, default 16]
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const runs = Number(process.argv[2] ?? 2000);
const seed = Number(process.argv[3] ?? 16);
const report = join(mkdtempSync(join(tmpdir(), "provael-fuzz-")), "cases.jsonl");
const t0 = performance.now();
const r = spawnSync(
  process.execPath,
  [join(root, "node_modules", "vitest", "vitest.mjs"), "run", "test/fuzz", "--testTimeout", "0"],
  {
    cwd: root,
    env: { ...process.env, FUZZ_RUNS: String(runs), FUZZ_SEED: String(seed), FUZZ_REPORT: report },
    encoding: "utf8",
  },
);
let lines = [];
try {
  lines = readFileSync(report, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
} catch {
  // No property finished.
}
const cases = lines.reduce((s, l) => s + l.cases, 0);
const outcome = (property, what) =>
  lines.find((l) => l.property === property)?.outcomes?.[what] ?? 0;
console.log(
  JSON.stringify(
    {
      seed,
      runs_per_property: runs,
      properties: Object.fromEntries(lines.map((l) => [l.property, l.cases])),
      cases,
      // Reports built to contradict themselves (or nest past the bound) that the reader accepted.
      accepted_contradictions: outcome("report.json contradictions", "accepted"),
      contradictions_refused: outcome("report.json contradictions", "refused"),
      deep_reports_refused: outcome("report.json deep nesting", "refused"),
      // Any exception other than a ProvaelError fails its property (and the run).
      uncaught_exceptions: r.status === 0 ? 0 : "see below",
      seconds: Number(((performance.now() - t0) / 1000).toFixed(1)),
      result: r.status === 0 ? "no uncaught exception" : "FAILED",
    },
    null,
    2,
  ),
);
if (r.status !== 0) {
  process.stdout.write(`${r.stdout}${r.stderr}`.slice(-8000));
  process.exit(1);
}
