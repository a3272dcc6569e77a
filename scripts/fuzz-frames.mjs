#!/usr/bin/env node
/**
 * The long run of the frame fuzz suite (src/policies/served/codec/fuzz.test.ts): every decoder a
 * policy server or client runs on a peer's bytes, each property over FUZZ_RUNS cases (default
 * 10,000), seeded (FUZZ_SEED, default 16) so a failure replays. Exits non-zero on any case that
 * throws something other than a ProvaelError.
 *
 *   node scripts/fuzz-frames.mjs [runs] [seed]
 */
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const runs = Number(process.argv[2] ?? 10_000);
const seed = Number(process.argv[3] ?? 16);
const t0 = performance.now();
const r = spawnSync(
  process.execPath,
  [
    join(root, "node_modules", "vitest", "vitest.mjs"),
    "run",
    "src/policies/served/codec/fuzz.test.ts",
    "--testTimeout",
    "0",
  ],
  {
    cwd: root,
    env: { ...process.env, FUZZ_RUNS: String(runs), FUZZ_SEED: String(seed) },
    encoding: "utf8",
  },
);
const seconds = ((performance.now() - t0) / 1000).toFixed(1);
const out = `${r.stdout}${r.stderr}`;
const passed = /Tests\s+.*?(\d+) passed/.exec(
  out.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g"), ""),
);
// Three properties (openpi, vla-eval, json-numpy), each over `runs` cases.
console.log(
  JSON.stringify({
    properties: 3,
    runs_per_property: runs,
    cases: 3 * runs,
    seed,
    seconds: Number(seconds),
    result: r.status === 0 ? "no uncaught exception" : "FAILED",
    tests_passed: passed ? Number(passed[1]) : 0,
  }),
);
if (r.status !== 0) {
  process.stdout.write(out);
  process.exit(1);
}
