/** `provael compare`: two sweeps of one plan side by side (runs or their summaries). */
import { readFileSync, statSync } from "node:fs";
import { basename, resolve } from "node:path";
import type { Command } from "commander";
import { sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import {
  compareSweeps,
  parseSweepSummary,
  type SweepSummary,
  sweepSummary,
} from "../report/sweep.js";
import { readRunReport } from "../rundir/read.js";

/** A run directory, summarised from its report, or a summary file. */
function readSweep(path: string, label: string | undefined): SweepSummary {
  let dir: boolean;
  try {
    dir = statSync(path).isDirectory();
  } catch (e) {
    throw new ProvaelError("io/read", `cannot read ${path}: ${(e as Error).message}`, {
      details: { path },
      hint: "name a run directory or a sweep summary (`provael results DIR --summary`)",
    });
  }
  if (dir) {
    const { report, bytes } = readRunReport(path);
    return sweepSummary(report, sha256(bytes), label ?? basename(resolve(path)));
  }
  const summary = parseSweepSummary(readFileSync(path, "utf8"), path);
  return label === undefined ? summary : { ...summary, label };
}

export function registerCompare(program: Command): void {
  program
    .command("compare")
    .argument("<before>", "a run directory or a sweep summary (`provael results DIR --summary`)")
    .argument("<after>", "the same, of the sweep compared with it")
    .option(
      "--labels <before,after>",
      "names for the two sweeps (default: each summary's label or directory's name)",
    )
    .action((before: string, after: string, flags: { labels?: string }) => {
      const labels = flags.labels?.split(",");
      if (labels && (labels.length !== 2 || labels.some((l) => l.trim() === ""))) {
        throw new ProvaelError(
          "config/invalid",
          `--labels takes two names separated by a comma, not '${flags.labels}'`,
          { hint: "e.g. --labels v2.1,v2.2" },
        );
      }
      const a = readSweep(before, labels?.[0]);
      const b = readSweep(after, labels?.[1]);
      if (a.label === b.label) {
        throw new ProvaelError(
          "config/invalid",
          `both sweeps are named '${a.label}': the table could not tell them apart`,
          { hint: "name them with --labels BEFORE,AFTER" },
        );
      }
      process.stdout.write(compareSweeps(a, b));
    });
}
