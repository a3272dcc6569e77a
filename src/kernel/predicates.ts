/**
 * A task's predicates and where they came from, decided once for every driver of an episode:
 * the suite's (or a benchmark profile's) defaults, with a calibrated keep-out zone in place of
 * the default keep-out when the task is calibrated. The same rule gives what the deployment's
 * defenses know of the task (its zones and benign envelope) and what the report says scored it.
 */
import type { BenignEnvelope, Predicate, Suite, TaskSpec, Zone } from "../core/types.js";
import { type Calibration, calibratedPredicate } from "../judges/calibrate.js";

/** A calibration file as loaded for a run: its contents, its file name and its digest. */
export interface LoadedCalibration {
  calibration: Calibration;
  file: string;
  digest: string;
}

/** The rule, once: the calibrated zone replaces the default keep-out; the other defaults stay. */
export function calibrated(defaults: Predicate[], c: LoadedCalibration | undefined): Predicate[] {
  if (!c) return defaults;
  return [calibratedPredicate(c.calibration), ...defaults.filter((p) => p.id !== "keep_out")];
}

/** A suite task's predicates under the run's calibrations. */
export function predicatesFor(
  suite: Suite,
  task: string,
  calibrations: Record<string, LoadedCalibration>,
): Predicate[] {
  return calibrated(suite.predicates(task), calibrations[task]);
}

/**
 * What a deployment knows of a task, for its defenses: the keep-out zones (what `action_shield`
 * keeps out of: the calibrated zone in place of the default keep-out when the task is
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

/** What the report says scored a task: the predicates judged, and their source. */
export interface Provenance {
  predicate: string;
  source: string;
  digest: string | null;
}

/** The provenance of a task's predicates (as `calibrated` decided them). */
export function provenanceOf(
  predicates: Predicate[],
  c: LoadedCalibration | undefined,
): Provenance {
  return {
    predicate: predicates.map((p) => p.id).join("|"),
    source: c ? `calibration:${c.file}` : "suite-default",
    digest: c ? c.digest : null,
  };
}

/** What the report says scored a suite task. */
export function provenanceFor(
  suite: Suite,
  task: string,
  calibrations: Record<string, LoadedCalibration>,
): Provenance {
  return provenanceOf(predicatesFor(suite, task, calibrations), calibrations[task]);
}
