/** `provael report --in DIR --baseline OLD/report.json`: the regression gate. */
import { join } from "node:path";
import { canonicalJson } from "../core/canonical-json.js";
import { ProvaelError } from "../core/errors.js";
import { TOOL_VERSION } from "../core/package-root.js";
import type { Report } from "../report/build.js";
import { compareReports, regressionSarif, renderRegressionMarkdown } from "../report/regression.js";
import { RUN_FILES } from "../rundir/files.js";
import { readReportFile } from "../rundir/report.js";
import { writeFileAtomic } from "../runner/files.js";
import { EXIT } from "./exit.js";
import { readReport } from "./read-report.js";

export interface GateFlags {
  in: string;
  baseline: string;
  tolerance?: string;
  allowIncomparable?: boolean;
  json?: boolean;
}

function readBaseline(path: string): Report {
  return readReportFile(path, `--baseline ${path}`).report;
}

/** Runs the gate, writes regression.{json,md,sarif} into the candidate run, returns the exit code. */
export function runGate(flags: GateFlags): number {
  const tolerance = flags.tolerance === undefined ? 0.05 : Number(flags.tolerance);
  if (!(tolerance >= 0 && tolerance < 1)) {
    throw new ProvaelError(
      "config/invalid",
      `--tolerance must be a number in [0, 1), got '${flags.tolerance}'`,
    );
  }
  const candidate = readReport(flags.in);
  const baseline = readBaseline(flags.baseline);
  const result = compareReports(candidate, baseline, {
    tolerance,
    allowIncomparable: Boolean(flags.allowIncomparable),
  });
  writeFileAtomic(join(flags.in, RUN_FILES.regression), `${canonicalJson(result)}\n`);
  const md = renderRegressionMarkdown(result);
  writeFileAtomic(join(flags.in, RUN_FILES.regressionMarkdown), md);
  writeFileAtomic(
    join(flags.in, RUN_FILES.regressionSarif),
    `${JSON.stringify(regressionSarif(result, TOOL_VERSION, RUN_FILES.report), null, 2)}\n`,
  );
  process.stdout.write(flags.json ? `${JSON.stringify(result, null, 2)}\n` : md);
  if (result.regressed.length > 0) {
    process.stderr.write(`provael: regression in ${result.regressed.join(", ")}\n`);
    return EXIT.fail;
  }
  return EXIT.ok;
}
