// Runs every bench/*.bench.mjs in turn (each in its own process, so one's memory or threads
// never skew another's) and prints their lines. Figures are ratios or rates measured in one run.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith(".bench.mjs"))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
let failed = 0;
for (const f of files) {
  console.log(`\n# ${f}`);
  const r = spawnSync(process.execPath, ["--expose-gc", join(here, f)], { stdio: "inherit" });
  if (r.status !== 0) {
    failed += 1;
    console.log(`${f} exited with ${r.status}`);
  }
}
process.exitCode = failed > 0 ? 1 : 0;
