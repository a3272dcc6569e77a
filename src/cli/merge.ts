import type { Command } from "commander";
import { nextSteps, runText } from "../report/text.js";
import { calibrationHintOf } from "../runner/calibration-plan.js";
import { mergeRuns } from "../runner/merge.js";

export function registerMerge(program: Command): void {
  program
    .command("merge")
    .requiredOption("--in <dirs...>", "shard run directories")
    .requiredOption("--out <dir>", "merged run directory (must not exist)")
    .option("--json", "print JSON")
    .action(async (flags: { in: string[]; out: string; json?: boolean }) => {
      const r = await mergeRuns(flags.in, flags.out, { commandLine: process.argv.slice(1) });
      if (flags.json) {
        process.stdout.write(
          `${JSON.stringify({ out: r.out, report_digest: r.digest, cells: r.cells, duplicates: r.duplicates, complete: r.alreadyComplete }, null, 2)}\n`,
        );
        return;
      }
      if (r.alreadyComplete || !r.report) {
        process.stdout.write(`${r.out} already holds this plan's merged run; nothing to do\n`);
        return;
      }
      process.stdout.write(`\n${runText(r.report, { dir: r.out })}\n\n`);
      process.stdout.write(
        `merged ${flags.in.length} shard(s), ${r.cells} cells (${r.duplicates} identical duplicate(s)) into ${r.out}/report.json (${r.digest}), report.md, report.html\n`,
      );
      process.stdout.write(`${nextSteps(r.out, true, calibrationHintOf(r.report)).join("\n")}\n`);
    });
}
