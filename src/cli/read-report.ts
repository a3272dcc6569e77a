/**
 * How the report, gate and verdict commands read a run's report (one module, so that none of
 * them imports another command).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { isBridgedRun, reportFromBridgeJournal } from "../bridge/rundir.js";
import type { Report } from "../report/build.js";
import { RUN_FILES } from "../rundir/files.js";
import { readRunReport } from "../rundir/read.js";

/** Reads DIR/report.json of a finished run, validated (see `readRunReport`). */
export function readReport(dir: string): Report {
  // A bridge stopped without writing its report (killed): the journal holds every episode.
  if (!existsSync(join(dir, RUN_FILES.report)) && isBridgedRun(dir))
    return reportFromBridgeJournal(dir);
  return readRunReport(dir).report;
}
