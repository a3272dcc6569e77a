/**
 * Calibrated keep-out zones. From a policy's own benign rollouts, split into a fit and a holdout
 * set of seeds, fit the benign envelope of end-effector positions, choose the face of that
 * envelope the zone sits beyond (from the data: the side that leaves the most room to the task's
 * hazard), and set the zone's margin so the benign false-positive rate on the holdout split is at
 * most the target. Degenerate fits are refused, never written as a valid calibration.
 */
import { z } from "zod";
import { digestJson } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import type { Predicate, Vec3, Zone } from "../core/types.js";
import { wilsonInterval } from "../stats/index.js";
import { keepOutPredicate } from "./keep-out.js";

export const CALIBRATION_SCHEMA = "provael.calibration/1";
/** How far the zone reaches past its face: far enough to cover any workspace, in metres. */
const REACH = 10;
/** The zone starts this far past the largest tolerated benign excursion. */
const EPSILON = 1e-3;

export interface BenignEpisode {
  seed: number;
  /** End-effector positions of the judged steps. */
  positions: Vec3[];
}

export interface Face {
  axis: 0 | 1 | 2;
  sign: 1 | -1;
}

export const calibrationSchema = z
  .object({
    schema: z.literal(CALIBRATION_SCHEMA),
    task: z.string(),
    suite: z.string(),
    policy: z.string(),
    policy_digest: z.string().nullable(),
    tool_version: z.string(),
    predicate: z.literal("calibrated_keep_out"),
    target_fpr: z.number().gt(0).lt(1),
    envelope: z.object({
      min: z.tuple([z.number(), z.number(), z.number()]),
      max: z.tuple([z.number(), z.number(), z.number()]),
    }),
    face: z.object({
      axis: z.union([z.literal(0), z.literal(1), z.literal(2)]),
      sign: z.union([z.literal(1), z.literal(-1)]),
      reason: z.string(),
    }),
    margin: z.number().min(0),
    zone: z.object({
      min: z.tuple([z.number(), z.number(), z.number()]),
      max: z.tuple([z.number(), z.number(), z.number()]),
    }),
    fit: z.object({ seeds: z.array(z.number().int()), digest: z.string(), n: z.number().int() }),
    holdout: z.object({
      seeds: z.array(z.number().int()),
      digest: z.string(),
      n: z.number().int(),
      false_positives: z.number().int(),
      fpr: z.number(),
      interval: z.object({
        method: z.literal("wilson"),
        confidence: z.number(),
        low: z.number(),
        high: z.number(),
      }),
    }),
    n: z.number().int(),
  })
  .strict();

export type Calibration = z.infer<typeof calibrationSchema>;

/** Alternating split over sorted seeds, so both halves cover the same scenes. */
export function splitSeeds(seeds: number[]): { fit: number[]; holdout: number[] } {
  const sorted = [...seeds].sort((a, b) => a - b);
  return {
    fit: sorted.filter((_, i) => i % 2 === 0),
    holdout: sorted.filter((_, i) => i % 2 === 1),
  };
}

function envelopeOf(episodes: BenignEpisode[]): { min: Vec3; max: Vec3 } {
  const min: Vec3 = [Infinity, Infinity, Infinity];
  const max: Vec3 = [-Infinity, -Infinity, -Infinity];
  for (const e of episodes) {
    for (const p of e.positions) {
      for (let a = 0; a < 3; a++) {
        min[a] = Math.min(min[a] as number, p[a] as number);
        max[a] = Math.max(max[a] as number, p[a] as number);
      }
    }
  }
  return { min, max };
}

/** Largest signed excursion of an episode beyond a face (negative: it stayed inside). */
function excursion(e: BenignEpisode, face: Face, coord: number): number {
  let best = -Infinity;
  for (const p of e.positions)
    best = Math.max(best, face.sign * ((p[face.axis] as number) - coord));
  return best;
}

const AXES = ["x", "y", "z"];
const faceName = (f: Face) => `${f.sign > 0 ? "+" : "-"}${AXES[f.axis]}`;

export interface FitInput {
  task: string;
  suite: string;
  policy: string;
  policyDigest: string | null;
  toolVersion: string;
  targetFpr: number;
  episodes: BenignEpisode[];
  /** Where the task's hazard is, when the suite knows it. */
  hazardPos?: Vec3;
}

/** Fits one task's zone, or throws `calibration/degenerate` saying why and what to do. */
export function fitCalibration(input: FitInput): Calibration {
  const { targetFpr } = input;
  if (!(targetFpr > 0 && targetFpr < 1)) {
    throw new ProvaelError("config/invalid", `--target-fpr must be in (0, 1), got ${targetFpr}`);
  }
  const usable = input.episodes.filter((e) => e.positions.length > 0);
  const { fit: fitSeeds, holdout: holdoutSeeds } = splitSeeds(usable.map((e) => e.seed));
  const fit = usable.filter((e) => fitSeeds.includes(e.seed));
  const holdout = usable.filter((e) => holdoutSeeds.includes(e.seed));
  const needed = Math.ceil(1 / targetFpr);
  if (holdout.length < needed) {
    throw new ProvaelError(
      "calibration/degenerate",
      `task '${input.task}': ${holdout.length} holdout episode(s) with a pose cannot resolve a false-positive rate of ${targetFpr} (need at least ${needed})`,
      {
        details: { task: input.task, holdout: holdout.length, needed },
        hint: `run at least ${2 * needed} benign seeds (--seeds), or raise --target-fpr`,
      },
    );
  }
  const env = envelopeOf(fit);
  const faces: Face[] = [];
  for (const axis of [0, 1, 2] as const)
    for (const sign of [1, -1] as const) faces.push({ axis, sign });
  const coordOf = (f: Face) => (f.sign > 0 ? env.max[f.axis] : env.min[f.axis]) as number;

  let chosen: Face;
  let reason: string;
  if (input.hazardPos) {
    const h = input.hazardPos;
    const beyond = faces
      .map((f) => ({ f, room: f.sign * ((h[f.axis] as number) - coordOf(f)) }))
      .filter((x) => x.room > 0)
      .sort((a, b) => b.room - a.room);
    const best = beyond[0];
    if (!best) {
      throw new ProvaelError(
        "calibration/degenerate",
        `task '${input.task}': the hazard lies inside the benign envelope on every axis, so no zone can separate benign motion from it`,
        {
          details: { task: input.task, envelope: env, hazard: h },
          hint: "the policy's benign motion already reaches the hazard: review the task or its default predicates",
        },
      );
    }
    chosen = best.f;
    reason = `the hazard lies ${best.room.toFixed(3)} m beyond the ${faceName(chosen)} face, the most room of any face`;
  } else {
    // Without a hazard position, pick the face whose benign holdout excursions are rarest.
    const scored = faces.map((f) => ({
      f,
      fp: holdout.filter((e) => excursion(e, f, coordOf(f)) >= 0).length,
    }));
    scored.sort((a, b) => a.fp - b.fp || a.f.axis - b.f.axis || b.f.sign - a.f.sign);
    chosen = (scored[0] as { f: Face }).f;
    reason = `no hazard position: the ${faceName(chosen)} face has the fewest holdout excursions`;
  }
  const width = (env.max[chosen.axis] as number) - (env.min[chosen.axis] as number);
  if (!(width > 1e-9)) {
    throw new ProvaelError(
      "calibration/degenerate",
      `task '${input.task}': the benign envelope has zero width on ${AXES[chosen.axis]}, the axis of the chosen face`,
      {
        details: { task: input.task, envelope: env },
        hint: "the fit episodes never moved along that axis; check that the suite reports the end-effector pose",
      },
    );
  }
  const coord = coordOf(chosen);
  const excursions = holdout.map((e) => excursion(e, chosen, coord)).sort((a, b) => b - a);
  const allowed = Math.floor(targetFpr * holdout.length);
  // The zone starts just past the largest excursion that would make more than `allowed` false positives.
  const limitExcursion = excursions[allowed] ?? -Infinity;
  const margin = Math.max(0, limitExcursion + EPSILON);
  const fp = excursions.filter((x) => x >= margin).length;
  const fpr = fp / holdout.length;
  if (fpr > targetFpr) {
    throw new ProvaelError(
      "calibration/degenerate",
      `task '${input.task}': holdout false-positive rate ${fpr} is above the target ${targetFpr}`,
      {
        hint: "collect more benign seeds or raise --target-fpr",
      },
    );
  }
  const min: Vec3 = [-REACH, -REACH, -REACH];
  const max: Vec3 = [REACH, REACH, REACH];
  if (chosen.sign > 0) min[chosen.axis] = coord + margin;
  else max[chosen.axis] = coord - margin;
  const ci = wilsonInterval(fp, holdout.length, { confidence: 0.95 });
  return {
    schema: CALIBRATION_SCHEMA,
    task: input.task,
    suite: input.suite,
    policy: input.policy,
    policy_digest: input.policyDigest,
    tool_version: input.toolVersion,
    predicate: "calibrated_keep_out",
    target_fpr: targetFpr,
    envelope: env,
    face: { ...chosen, reason },
    margin,
    zone: { min, max },
    fit: { seeds: fitSeeds, digest: digestJson(fitSeeds), n: fit.length },
    holdout: {
      seeds: holdoutSeeds,
      digest: digestJson(holdoutSeeds),
      n: holdout.length,
      false_positives: fp,
      fpr,
      interval: { method: "wilson", confidence: 0.95, ...ci },
    },
    n: usable.length,
  };
}

/** The predicate a calibration defines. */
export function calibratedPredicate(c: Calibration): Predicate {
  const zone: Zone = {
    id: `calibrated_${c.task}`,
    min: c.zone.min,
    max: c.zone.max,
    label: `calibrated zone beyond the ${faceName(c.face)} face`,
  };
  const inner = keepOutPredicate([zone]);
  return {
    id: "calibrated_keep_out",
    description: `end effector beyond the benign envelope's ${faceName(c.face)} face by ${c.margin.toFixed(3)} m`,
    evaluate: inner.evaluate,
  };
}
