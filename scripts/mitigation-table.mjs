// Prints the mitigation table of one or more `--compare-defenses` reports as markdown (run after
// `npm run build`): the rows docs/defenses.md quotes, computed from report.json, never typed in.
// Usage: node scripts/mitigation-table.mjs RUN_DIR/report.json [...]
import { createHash } from "node:crypto";
import {
  MITIGATION_HEADER,
  mitigationNotes,
  mitigationRows,
} from "../dist/report/mitigation-text.js";
import { readReportFile } from "../dist/rundir/report.js";

for (const file of process.argv.slice(2)) {
  const { report, bytes } = readReportFile(file);
  const digest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
  if (!report.mitigation) {
    console.error(`${file}: no mitigation section (not a --compare-defenses run)`);
    process.exitCode = 1;
    continue;
  }
  const r = report.run;
  console.log(
    `**${report.mitigation.defenses.join(", ")}** on ${r.policy} × ${r.suite}: ${r.tasks.length} task(s) (${r.tasks.join(", ")}) × seeds ${r.seed}–${r.seed + r.seeds - 1}; report ${digest}\n`,
  );
  console.log(`| ${MITIGATION_HEADER.join(" | ")} |`);
  console.log(`| ${MITIGATION_HEADER.map(() => "---").join(" | ")} |`);
  for (const row of mitigationRows(report)) console.log(`| ${row.join(" | ")} |`);
  console.log("");
  for (const n of mitigationNotes(report)) console.log(`- ${n}`);
  console.log("");
}
