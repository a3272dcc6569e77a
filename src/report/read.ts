/**
 * report.json is read and validated by the run directory's owner (src/rundir/report.ts and
 * src/rundir/read.ts); this module keeps the report layer's import path for scripts.
 */

export { readRunReport } from "../rundir/read.js";
export { parseReport, type ReadReport, readReportFile } from "../rundir/report.js";
