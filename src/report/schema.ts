/**
 * The report.json schema lives with the other run-directory schemas (src/rundir/schema); this
 * module keeps the report layer's import path.
 */
export {
  episodeSchema,
  rateSchema,
  reportJsonSchema,
  reportSchema,
} from "../rundir/schema/report.js";
