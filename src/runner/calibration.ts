/** Loading calibration files and turning them into per-task predicates and provenance. */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import type { BenignEnvelope, Predicate, Suite, TaskSpec, Zone } from "../core/types.js";
import { describeIssues } from "../core/zod-issues.js";
import { type Calibration, calibratedPredicate, calibrationSchema } from "../judges/calibrate.js";

export interface LoadedCalibration {
  calibration: Calibration;
  file: string;
  digest: string;
}

export const CALIBRATION_SUFFIX = ".calibration.json";

/** Reads every `<task>.calibration.json` in a directory, validated. */
export function loadCalibrations(dir: string): Record<string, LoadedCalibration> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new ProvaelError("io/read", `--calib ${dir} is not a directory`, {
      hint: "pass the --out directory of `provael calibrate`",
    });
  }
  const out: Record<string, LoadedCalibration> = {};
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(CALIBRATION_SUFFIX))
    .sort();
  if (files.length === 0) {
    throw new ProvaelError("io/read", `--calib ${dir} holds no *${CALIBRATION_SUFFIX} file`, {
      hint: "pass the --out directory of `provael calibrate`",
    });
  }
  for (const f of files) {
    const path = join(dir, f);
    const bytes = readFileSync(path);
    let raw: unknown;
    try {
      raw = JSON.parse(bytes.toString("utf8"));
    } catch (e) {
      throw new ProvaelError("io/malformed", `${path} is not JSON`, { cause: e });
    }
    const parsed = calibrationSchema.safeParse(raw);
    if (!parsed.success) {
      throw new ProvaelError(
        "io/malformed",
        `${path} is not a valid calibration: ${describeIssues(parsed.error)}`,
        { hint: "pass the --out directory of `provael calibrate`, unedited" },
      );
    }
    out[parsed.data.task] = {
      calibration: parsed.data,
      file: basename(path),
      digest: sha256(bytes),
    };
  }
  return out;
}

/** A task's predicates: the calibrated zone replaces the suite's default keep-out. */
export function predicatesFor(
  suite: Suite,
  task: string,
  calibrations: Record<string, LoadedCalibration>,
): Predicate[] {
  const defaults = suite.predicates(task);
  const c = calibrations[task];
  if (!c) return defaults;
  return [calibratedPredicate(c.calibration), ...defaults.filter((p) => p.id !== "keep_out")];
}

/**
 * What a deployment knows of a task, for its defenses: the keep-out zones (what `action_shield`
 * keeps out of: the calibrated zone in place of the suite's default keep-out when the task is
 * calibrated) and the benign envelope its calibration fitted (null: uncalibrated, or fitted
 * without one), for `envelope_monitor`.
 */
export function deploymentFor(
  task: TaskSpec,
  calibrations: Record<string, LoadedCalibration>,
): { zones: Zone[]; envelope: BenignEnvelope | null } {
  const c = calibrations[task.id];
  if (!c) return { zones: task.hazard.zones, envelope: null };
  const e = c.calibration.envelope;
  return {
    zones: [
      {
        id: "calibrated_keep_out",
        min: c.calibration.zone.min,
        max: c.calibration.zone.max,
        label: `the calibrated keep-out zone (${c.file})`,
      },
    ],
    envelope: e ? { translation: e.translation, box: e.box } : null,
  };
}

/** What the report says scored a task. */
export function provenanceFor(
  suite: Suite,
  task: string,
  calibrations: Record<string, LoadedCalibration>,
) {
  const c = calibrations[task];
  return {
    predicate: predicatesFor(suite, task, calibrations)
      .map((p) => p.id)
      .join("|"),
    source: c ? `calibration:${c.file}` : "suite-default",
    digest: c ? c.digest : null,
  };
}
