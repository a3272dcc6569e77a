/**
 * The names the run directory's files carry to say which contract they follow, declared once:
 * the schemas that check them and the writers that stamp them read these.
 */
export const REPORT_SCHEMA = "provael.report/1";
export const PROTOCOL = "provael-redteam/v2";
export const MANIFEST_SCHEMA = "provael.manifest/1";
export const REGRESSION_SCHEMA = "provael.regression/1";
export const FRAMES_FORMAT = "provael.frames/1";
export const FRAME_SCENE_SCHEMA = "provael.frame-scene/1";
export const SHOWCASE_CLIP_FORMAT = "provael.showcase-clip/1";

/** `/2`: every line carries `sum`. */
export const JOURNAL_FORMAT = "provael.journal/2";
/**
 * Journal formats this version refuses, each with why (the reader names it, so its owner knows
 * what happened rather than meeting a parse error).
 */
export const REFUSED_JOURNAL_FORMATS: Readonly<Record<string, string>> = {
  "provael.journal/1": "written before journal lines carried checksums; it cannot be verified",
};
