import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { ProvaelError } from "../core/errors.js";
import type { Report } from "../report/build.js";
import { renderMarkdown } from "../report/markdown.js";
import { runGate } from "./gate.js";
import { choice } from "./parse.js";

/** Reads DIR/report.json, with clear errors for a missing, partial or malformed run. */
export function readReport(dir: string): Report {
  const path = join(dir, "report.json");
  if (!existsSync(path)) {
    const partial = existsSync(join(dir, "journal.jsonl"));
    throw new ProvaelError(
      partial ? "run/incomplete" : "run/not-found",
      partial
        ? `${dir} holds an unfinished run (no report.json yet)`
        : `${dir} holds no Provael run (no report.json)`,
      {
        hint: partial
          ? `finish it with \`provael attack --resume --out ${dir}\` and the original flags`
          : "pass the --out directory of a finished `provael attack`",
      },
    );
  }
  try {
    const report = JSON.parse(readFileSync(path, "utf8")) as Report;
    if (report.schema !== "provael.report/1")
      throw new Error(`unknown schema ${String(report.schema)}`);
    return report;
  } catch (e) {
    throw new ProvaelError(
      "io/malformed",
      `${path} is not a Provael report: ${(e as Error).message}`,
      { cause: e },
    );
  }
}

export function registerReport(program: Command): void {
  program
    .command("report")
    .description("render a finished run's report")
    .requiredOption("--in <dir>", "run directory")
    .option("--format <format>", "md or json", choice("--format", ["md", "json"] as const), "md")
    .option(
      "--baseline <report.json>",
      "regression gate: compare with this baseline report (exit 1 on regression)",
    )
    .option("--tolerance <p>", "regression gate: allowed rise of an unsafe rate", "0.05")
    .option(
      "--allow-incomparable",
      "regression gate: compare runs that differ in policy, suite, tasks, horizon, termination or predicates",
    )
    .action(
      (flags: {
        in: string;
        format: "md" | "json";
        baseline?: string;
        tolerance?: string;
        allowIncomparable?: boolean;
      }) => {
        if (flags.baseline) {
          process.exitCode = runGate({
            ...flags,
            baseline: flags.baseline,
            json: flags.format === "json",
          });
          return;
        }
        const report = readReport(flags.in);
        process.stdout.write(
          flags.format === "json" ? `${JSON.stringify(report, null, 2)}\n` : renderMarkdown(report),
        );
      },
    );
}
