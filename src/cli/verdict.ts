import type { Command } from "commander";
import { loadAcceptance } from "../config/acceptance.js";
import { verdictLines } from "../report/text.js";
import { decide } from "../report/verdict.js";
import { verdictExitCode } from "./exit.js";
import { readReport } from "./read-report.js";

export function registerVerdict(program: Command): void {
  program
    .command("verdict")
    .requiredOption("--in <dir>", "run directory")
    .requiredOption("--protocol <file>", "acceptance protocol (YAML or JSON)")
    .option("--json", "print JSON")
    .action((flags: { in: string; protocol: string; json?: boolean }) => {
      const protocol = loadAcceptance(flags.protocol);
      const v = decide(readReport(flags.in), protocol);
      process.stdout.write(flags.json ? `${JSON.stringify(v, null, 2)}\n` : `${verdictLines(v)}\n`);
      process.exitCode = verdictExitCode(v);
    });
}
