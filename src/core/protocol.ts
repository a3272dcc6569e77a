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

/**
 * `/3`: every episode line carries its plan's fields (`plan_fields`), and the plan's keys are
 * written as report.json writes them (`scene_pin`, `policy_options`, `attack_params`).
 */
export const JOURNAL_FORMAT = "provael.journal/3";
/**
 * Journal formats this version refuses, each with why (the reader names it, so its owner knows
 * what happened rather than meeting a parse error).
 */
export const REFUSED_JOURNAL_FORMATS: Readonly<Record<string, string>> = {
  "provael.journal/1": "written before journal lines carried checksums; it cannot be verified",
  "provael.journal/2":
    "written before journal lines carried the plan they were played under; its lines cannot be checked against its plan",
};
