// Fits envelope_monitor's benign envelope from the benign (`none`, undefended) episodes of a
// finished run and prints it as the --defense-param value (run after `npm run build`).
// Usage: node scripts/fit-envelope.mjs RUN_DIR [ARM]
// Then: provael attack ... --defenses envelope_monitor --defense-param envelope_monitor.envelope='<printed JSON>'
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fitEnvelope } from "../dist/judges/envelope.js";
import { readReportFile } from "../dist/rundir/report.js";

const [dir, arm = "none"] = process.argv.slice(2);
if (!dir) {
  console.error("usage: node scripts/fit-envelope.mjs RUN_DIR [ARM]");
  process.exit(2);
}
const { report } = readReportFile(join(dir, "report.json"));
const cells = new Set(
  report.episodes
    .filter((e) => e.arm === arm && !e.defenses && e.error === null)
    .map((e) => e.cell),
);
const steps = readFileSync(join(dir, "trajectories.jsonl"), "utf8")
  .split("\n")
  .filter((l) => l.trim() !== "")
  .map((l) => JSON.parse(l))
  .filter((s) => cells.has(s.cell));
const fit = fitEnvelope(steps);
if (!fit) {
  console.error(`no ${arm} steps in ${dir}`);
  process.exit(1);
}
console.error(`${cells.size} ${arm} episode(s), ${fit.steps} steps (${fit.posed} with a pose)`);
console.log(JSON.stringify(fit.envelope));
