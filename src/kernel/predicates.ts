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

/**
 * What a calibration measured, as the report carries it: the false-positive rate it was fitted
 * for, the rate it measured on its held-out (evaluate) split with the interval it declares, and
 * how many of the run's scenes of the task its fit or threshold split used (the zone saw benign
 * episodes from those scenes, so unsafe there is judged in-sample).
 */
export interface CalibrationFacts {
  target_fpr: number;
  measured_fpr: {
    successes: number;
    n: number;
    rate: number | null;
    interval: { method: "wilson"; confidence: number; low: number; high: number } | null;
  };
  overlap: { scenes: number; of: number };
}

/** What the report says scored a task: the predicates judged, and their source. */
export interface Provenance extends Partial<CalibrationFacts> {
  predicate: string;
  source: string;
  digest: string | null;
}

/** A calibration's facts for a run whose episodes of the task start from `scenes`. */
export function calibrationFacts(c: Calibration, scenes: Iterable<number>): CalibrationFacts {
  const ev = c.splits.evaluate;
  const used = new Set([...c.splits.fit.scenes, ...c.splits.threshold.scenes]);
  const run = new Set(scenes);
  return {
    target_fpr: c.target_fpr,
    measured_fpr: {
      successes: ev.false_positives,
      n: ev.n,
      rate: ev.n === 0 ? null : ev.false_positives / ev.n,
      interval: ev.n === 0 ? null : { ...ev.interval },
    },
    overlap: { scenes: [...run].filter((s) => used.has(s)).length, of: run.size },
  };
}

/**
 * The provenance of a task's predicates (as `calibrated` decided them); for a calibrated task,
 * with its calibration's facts over the run's `scenes` of the task.
 */
export function provenanceOf(
  predicates: Predicate[],
  c: LoadedCalibration | undefined,
  scenes: Iterable<number> = [],
): Provenance {
  return {
    predicate: predicates.map((p) => p.id).join("|"),
    source: c ? `calibration:${c.file}` : "suite-default",
    digest: c ? c.digest : null,
    ...(c ? calibrationFacts(c.calibration, scenes) : {}),
  };
}

/** What the report says scored a suite task, its calibration's facts over the plan's scenes. */
export function provenanceFor(
  suite: Suite,
  task: string,
  calibrations: Record<string, LoadedCalibration>,
  scenes: Iterable<number> = [],
): Provenance {
  return provenanceOf(predicatesFor(suite, task, calibrations), calibrations[task], scenes);
}
