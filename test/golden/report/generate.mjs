#!/usr/bin/env node
/**
 * Regenerates test/golden/report/stub-quick.report.json: the report.json of the stub quick run
 * (`provael attack --policy stub --suite stub`, the default recipe), written by the built CLI.
 * Run after a change that is meant to alter report bytes (a new field, a statistic, the tool
 * version), review the diff, and commit it with that change:
 *
 *   npm run build && node test/golden/report/generate.mjs
 *
 * With a path argument it writes there instead (the staleness test compares that file).
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..", "..");
const GOLDEN_ARGS = ["attack", "--policy", "stub", "--suite", "stub", "--no-html"];
const work = mkdtempSync(join(tmpdir(), "provael-golden-"));
const out = join(work, "run");
const r = spawnSync(
  process.execPath,
  [join(root, "dist", "cli", "bin.js"), ...GOLDEN_ARGS, "--out", out],
  {
    encoding: "utf8",
  },
);
const target = process.argv[2] ?? join(here, "stub-quick.report.json");
if (r.status === 0) copyFileSync(join(out, "report.json"), target);
rmSync(work, { recursive: true, force: true });
if (r.status !== 0) {
  process.stderr.write(r.stderr);
  process.exit(1);
}
console.log(`wrote ${target}`);
