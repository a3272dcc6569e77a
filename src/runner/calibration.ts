/**
 * Loading calibration files. What a calibration does to a task's predicates, to its deployment's
 * zones and to the report's provenance is the episode kernel's (src/kernel/predicates.ts).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import { describeIssues } from "../core/zod-issues.js";
import { calibrationSchema } from "../judges/calibrate.js";
import type { LoadedCalibration } from "../kernel/predicates.js";

export type { LoadedCalibration } from "../kernel/predicates.js";

export const CALIBRATION_SUFFIX = ".calibration.json";

/** Whether a directory holds calibration files (calibrate never writes into one that does). */
export function calibrationsIn(dir: string): boolean {
  return (
    existsSync(dir) &&
    statSync(dir).isDirectory() &&
    readdirSync(dir).some((f) => f.endsWith(CALIBRATION_SUFFIX))
  );
}

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
