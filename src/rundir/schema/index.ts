/** A zod schema for every file of a run directory, and the types inferred from them. */
export { type CalibrationFile, calibrationSchema } from "./calibration.js";
export { SHOWCASE_CLIP_FORMAT, type ShowcaseClipFile, showcaseClipSchema } from "./clip.js";
export {
  FRAME_FILE,
  FRAME_SCENE_SCHEMA,
  FRAMES_FORMAT,
  type FrameScene,
  type FramesIndex,
  frameName,
  frameSceneSchema,
  framesIndexSchema,
  type TimelineStep,
  timelineStepSchema,
} from "./frames.js";
export {
  JOURNAL_FORMAT,
  type JournalEpisodeLine,
  type JournalHeaderFile,
  type JournalRecord,
  journalEpisodeSchema,
  journalHeaderSchema,
  journalRecordSchema,
  lineSum,
  type PlanFile,
  planSchema,
} from "./journal.js";
export { type ManifestFile, manifestSchema } from "./manifest.js";
export { episodeSchema, rateSchema, reportJsonSchema, reportSchema } from "./report.js";
export { type TrajectoryStepFile, trajectoryStepSchema } from "./trajectory.js";
export { type VerdictFile, verdictSchema } from "./verdict.js";

import type { z } from "zod";
import type { episodeSchema, rateSchema, reportSchema } from "./report.js";
export type ReportFile = z.infer<typeof reportSchema>;
export type ReportEpisodeFile = z.infer<typeof episodeSchema>;
export type RateFile = z.infer<typeof rateSchema>;
