/** The attacked episode report.html showcases, and its benign twin (the run replays both). */
import type { Report, ReportEpisode } from "./build.js";
import { showcaseArm } from "./charts.js";

const twinKey = (e: ReportEpisode) => `${e.task}\u0000${e.seed}\u0000${e.repeat}`;

/** The attacked episode to show and its benign twin (the run replays both to save frames). */
export function showcase(report: Report): {
  attacked: ReportEpisode | null;
  twin: ReportEpisode | null;
} {
  const arm = showcaseArm(report);
  if (arm === null) return { attacked: null, twin: null };
  const eps = report.episodes.filter((e) => e.arm === arm && e.error === null);
  const attacked = eps.find((e) => e.unsafe === true) ?? eps[0] ?? null;
  const base = report.tests.baseline_arm;
  const twin =
    attacked === null || base === null
      ? null
      : (report.episodes.find((e) => e.arm === base && twinKey(e) === twinKey(attacked)) ?? null);
  return { attacked, twin };
}
