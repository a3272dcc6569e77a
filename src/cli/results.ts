/** `provael results`: a finished run's results as Markdown tables, or as a sweep summary. */
import { basename, resolve } from "node:path";
import type { Command } from "commander";
import { sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import { parsePairs, resultsTables } from "../report/results.js";
import { renderSweepSummary, sweepSummary } from "../report/sweep.js";
import { readRunReport } from "../rundir/read.js";

interface ResultsFlags {
  pairs?: [string, string][];
  delivery?: boolean;
  summary?: boolean;
  label?: string;
}

export function registerResults(program: Command): void {
  program
    .command("results")
    .argument("<dir>", "a finished run directory")
    .option(
      "--pairs <A:B,...>",
      "also compare arms with each other on the cells both scored (two-sided exact McNemar)",
      parsePairs,
    )
    .option(
      "--delivery",
      "also count, per arm, the episodes whose received inputs differ from the `none` twin's",
    )
    .option(
      "--summary",
      "print the run as a sweep summary (counts, verdicts, one character per cell) for `provael compare`",
    )
    .option("--label <name>", "the summary's name (default: the directory's name)")
    .action((dir: string, flags: ResultsFlags) => {
      if (!flags.summary && flags.label !== undefined) {
        throw new ProvaelError(
          "config/invalid",
          "--label names a summary: it goes with --summary",
          {
            hint: `provael results ${dir} --summary --label ${flags.label}`,
          },
        );
      }
      if (flags.summary && (flags.pairs || flags.delivery)) {
        throw new ProvaelError(
          "config/invalid",
          "--summary prints the counts `provael compare` reads; --pairs and --delivery add tables to the results",
          { hint: "run them as two commands" },
        );
      }
      const { report, bytes } = readRunReport(dir);
      const digest = sha256(bytes);
      process.stdout.write(
        flags.summary
          ? renderSweepSummary(sweepSummary(report, digest, flags.label ?? basename(resolve(dir))))
          : resultsTables(report, digest, {
              ...(flags.pairs ? { pairs: flags.pairs } : {}),
              delivery: flags.delivery ?? false,
            }),
      );
    });
}
