import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Command } from "commander";
import { choice } from "../config/parse.js";
import { sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import { inspectAttestation } from "../evidence/attestation.js";
import { type Via, viaOfManifest } from "../report/caveats.js";
import {
  buildCompliance,
  type ComplianceContext,
  renderComplianceMarkdown,
} from "../report/compliance.js";
import {
  type Completeness,
  completeness,
  type Expectation,
  expectationFromVlaEvalConfig,
  parseExpect,
  renderCompletenessMarkdown,
} from "../report/expected.js";
import { formatRate, pct } from "../report/format.js";
import { renderHtml } from "../report/html.js";
import { renderMarkdown } from "../report/markdown.js";
import { buildSarif } from "../report/sarif.js";
import { type ShowcaseClip, showcaseClipFor } from "../report/showcase-clip.js";
import { checkOutputFile, RUN_FILES, writeFileAtomic } from "../rundir/files.js";
import { readRun } from "../rundir/read.js";
import { readReportBytes } from "../rundir/report.js";
import { EXIT } from "./exit.js";
import { runGate } from "./gate.js";
import { readReport } from "./read-report.js";

/** What made the run in `dir`, from its execution manifest (none, or unreadable: attack). */
function madeBy(dir: string): Via {
  const path = join(dir, RUN_FILES.manifest);
  if (!existsSync(path)) return "attack";
  try {
    return viaOfManifest(JSON.parse(readFileSync(path, "utf8")) as { made_by?: unknown });
  } catch {
    return "attack";
  }
}

/** Where `provael report --format compliance` looks for an attestation of the run by default. */
export const DEFAULT_ATTESTATION = "attestation.dsse.json";

/** What the compliance map needs from the run directory besides report.json. */
function complianceContext(dir: string, attestation: string | undefined): ComplianceContext {
  const reportBytes = readReportBytes(join(dir, RUN_FILES.report));
  const run = readRun(dir);
  const verdict = run.state === "finished" ? (run.manifest?.verdict ?? null) : null;
  const attPath = attestation ?? join(dir, DEFAULT_ATTESTATION);
  return {
    reportDigest: sha256(reportBytes),
    manifest: { present: existsSync(join(dir, RUN_FILES.manifest)), verdict },
    ...(existsSync(attPath) ? { attestation: inspectAttestation(attPath, reportBytes) } : {}),
  };
}

function rateFlag(flag: string) {
  return (raw: string): number => {
    const v = Number(raw);
    if (raw.trim() === "" || !Number.isFinite(v) || v < 0 || v > 1) {
      throw new ProvaelError(
        "config/invalid",
        `${flag} must be a rate between 0 and 1, got '${raw}'`,
        {
          details: { flag, value: raw },
          hint: `pass e.g. ${flag} 0.2 for 20%`,
        },
      );
    }
    return v;
  };
}

const FORMATS = ["md", "json", "sarif", "compliance", "html"] as const;
type Format = (typeof FORMATS)[number];

interface ReportFlags {
  in: string;
  expect?: string;
  expectFrom?: string;
  format: Format;
  out?: string;
  threshold?: number;
  attestation?: string;
}

function write(out: string | undefined, text: string): void {
  if (out === undefined) {
    process.stdout.write(text);
    return;
  }
  checkOutputFile(out, "--out");
  try {
    writeFileAtomic(out, text);
  } catch (e) {
    throw new ProvaelError("io/write", `cannot write ${out}: ${(e as Error).message}`, {
      cause: e,
    });
  }
}

function readExpectation(flags: ReportFlags): Expectation | undefined {
  if (flags.expect !== undefined && flags.expectFrom !== undefined) {
    throw new ProvaelError("config/invalid", "--expect and --expect-from exclude each other", {
      hint: "give the expectation once",
    });
  }
  if (flags.expect !== undefined) return parseExpect(flags.expect);
  if (flags.expectFrom !== undefined) return expectationFromVlaEvalConfig(flags.expectFrom);
  return undefined;
}

export function registerReport(program: Command): void {
  program
    .command("report")
    .requiredOption("--in <dir>", "run directory")
    .option("--format <format>", FORMATS.join(", "), choice("--format", FORMATS), "md")
    .option(
      "--out <file>",
      "write to a file instead of stdout (compliance: .md gives Markdown, otherwise JSON)",
    )
    .option(
      "--threshold <rate>",
      "exit 1 when the treatment arms' 95% Wilson upper bound on the unsafe rate exceeds RATE",
      rateFlag("--threshold"),
    )
    .option(
      "--attestation <file>",
      `attestation the compliance map looks for (default: DIR/${DEFAULT_ATTESTATION})`,
    )
    .option(
      "--expect <TASKSxEPISODES>",
      "cells every arm should have (e.g. 10x50); missing ones are listed and the exit code is 3",
    )
    .option(
      "--expect-from <vla-eval-config.yaml>",
      "take the expected tasks × episodes from the vla-eval config that drove a bridge run",
    )
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
      async (
        flags: ReportFlags & { baseline?: string; tolerance?: string; allowIncomparable?: boolean },
      ) => {
        // The regression gate (owned by src/cli/gate.ts) writes regression.{json,md,sarif}.
        if (flags.baseline) {
          process.exitCode = runGate({
            ...flags,
            baseline: flags.baseline,
            json: flags.format === "json",
          });
          return;
        }
        const expectation = readExpectation(flags);
        const report = readReport(flags.in);
        // The caveats' fixes are worded for what made the run (its manifest says).
        const via = madeBy(flags.in);
        const expected: Completeness | undefined = expectation
          ? completeness(report, expectation)
          : undefined;
        switch (flags.format) {
          case "md":
            write(
              flags.out,
              expected
                ? `${renderMarkdown(report, { via })}\n${renderCompletenessMarkdown(expected)}`
                : renderMarkdown(report, { via }),
            );
            break;
          case "json":
            // report.json itself stays as written; the printed copy carries the expectation.
            write(
              flags.out,
              `${JSON.stringify(expected ? { ...report, expected } : report, null, 2)}\n`,
            );
            break;
          case "sarif":
            write(flags.out, `${JSON.stringify(buildSarif(report), null, 2)}\n`);
            break;
          case "compliance": {
            const map = buildCompliance(report, complianceContext(flags.in, flags.attestation));
            write(
              flags.out,
              flags.out?.toLowerCase().endsWith(".md")
                ? renderComplianceMarkdown(map)
                : `${JSON.stringify(map, null, 2)}\n`,
            );
            break;
          }
          case "html": {
            // The clip of the showcased pair goes beside the page (clips/showcase.webm).
            if (flags.out !== undefined) checkOutputFile(flags.out, "--out");
            const clip: ShowcaseClip =
              flags.out === undefined
                ? {
                    kind: "none",
                    reason:
                      "the page went to standard output, so there is no folder to put the clip beside it (pass --out FILE.html)",
                  }
                : await showcaseClipFor(report, flags.in, dirname(resolve(flags.out)));
            write(flags.out, await renderHtml(report, flags.in, { clip, via }));
            break;
          }
        }
        if (flags.out !== undefined) process.stderr.write(`wrote ${flags.out}\n`);
        if (expected && !expected.complete) {
          const missing = Object.values(expected.arms).reduce((a, x) => a + x.missing, 0);
          const total = Object.values(expected.arms).reduce((a, x) => a + x.expected, 0);
          process.stderr.write(
            `provael: incomplete: ${missing} of ${total} expected cells have no episode (${expected.source}); the rates cover the finished cells only\n`,
          );
          process.exitCode = EXIT.incomplete;
        }
        if (flags.threshold !== undefined) {
          const t = report.summary.treatment_unsafe;
          const high = t.interval?.high ?? null;
          if (high === null) {
            process.stderr.write(
              "provael: gate failed: no judged treatment episode, so the attack success rate is unknown\n",
            );
            process.exitCode = EXIT.fail;
          } else if (high > flags.threshold) {
            process.stderr.write(
              `provael: gate failed: attack success ${formatRate(t)}; its 95% upper bound ${pct(high)} exceeds the threshold ${pct(flags.threshold)}\n`,
            );
            process.exitCode = EXIT.fail;
          } else {
            process.stderr.write(
              `provael: gate passed: attack success ${formatRate(t)}; upper bound ${pct(high)} ≤ ${pct(flags.threshold)}\n`,
            );
          }
        }
      },
    );
}
