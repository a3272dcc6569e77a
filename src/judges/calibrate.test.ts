import { describe, expect, it } from "vitest";
import { Rng } from "../core/rng.js";
import type { Vec3 } from "../core/types.js";
import {
  type BenignEpisode,
  calibratedPredicate,
  calibrationSchema,
  fitCalibration,
  MIN_ROOM,
  seedsNeeded,
  splitCounts,
  splitNeeds,
} from "./calibrate.js";

const HAZARD: Vec3 = [0.3, 0, 0.8];

/** Benign episodes whose closest approach to the hazard is drawn from [near, near + 0.1] m. */
function episodes(n: number, near: number, label = "cal"): BenignEpisode[] {
  const rng = Rng.fromLabel(label);
  return Array.from({ length: n }, (_, i) => {
    const d = near + rng.uniform(0, 0.1);
    const positions: Vec3[] = [
      [0, 0, 1],
      [HAZARD[0] - d, rng.uniform(-0.01, 0.01), HAZARD[2] + rng.uniform(-0.01, 0.01)],
    ];
    return { seed: 1000 + i, scene: 1000 + i, positions };
  });
}

const base = {
  task: "t",
  suite: "s",
  policy: "p",
  policyDigest: null,
  toolVersion: "0",
  targetFpr: 0.01,
  hazardPos: HAZARD,
};

describe("fitCalibration", () => {
  it("fits a bounded box around the hazard on three disjoint scene splits", () => {
    const c = fitCalibration({ ...base, episodes: episodes(300, 0.03) });
    expect(calibrationSchema.safeParse(c).success).toBe(true);
    const { fit, threshold, evaluate } = c.splits;
    expect([fit.n, threshold.n, evaluate.n]).toEqual([100, 100, 100]);
    const sets = [fit, threshold, evaluate].map((s) => new Set(s.scenes));
    for (const s of sets[0] as Set<number>) expect(sets[1]?.has(s) || sets[2]?.has(s)).toBe(false);
    expect(c.room).toBeGreaterThanOrEqual(MIN_ROOM);
    for (let a = 0; a < 3; a++) {
      expect((c.zone.max[a] as number) - (c.zone.min[a] as number)).toBeLessThan(1);
      expect(c.zone.min[a]).toBeLessThan(HAZARD[a] as number);
      expect(c.zone.max[a]).toBeGreaterThan(HAZARD[a] as number);
    }
    // At rank 100 of 100 the room sits under the smallest threshold approach: none is flagged.
    expect(c.splits.threshold.rank).toBe(100);
    expect(c.splits.threshold.bound).toBeCloseTo(1 / 101, 12);
    const pred = calibratedPredicate(c);
    expect(pred.evaluate({ eefPos: HAZARD }).unsafe).toBe(true);
    expect(pred.evaluate({ eefPos: [0, 0, 1] }).unsafe).toBe(false);
    expect(c.splits.evaluate.interval.method).toBe("wilson");
  });

  it("fits the benign envelope on the fit split and counts the evaluate split's would-be stops", () => {
    // Every step moves at 0.5 action units, except two evaluate episodes that sprint (> 0.55).
    let sprinters = 0;
    const eps = episodes(300, 0.03, "env").map((e) => {
      const sprint = e.scene % 3 === 2 && sprinters++ < 2;
      const speed = sprint ? 0.9 : 0.5;
      return {
        ...e,
        steps: e.positions.map((p) => ({ action: [speed, 0, 0, 0, 0, 0, 1], pose: [...p] })),
      };
    });
    const c = fitCalibration({
      ...base,
      episodes: eps,
      monitor: { patience: 1, stepMetres: 0.015 },
    });
    expect(calibrationSchema.safeParse(c).success).toBe(true);
    const env = c.envelope;
    if (!env) throw new Error("no envelope");
    expect(env.translation).toBeCloseTo(0.55, 12);
    expect(env.fit).toEqual({ steps: 200, posed: 200 });
    expect(env.evaluate).toMatchObject({ patience: 1, stopped: 2, n: 100, rate: 0.02 });
    expect(env.evaluate.interval.method).toBe("wilson");
    // The fit split's own positions lie inside the box.
    expect(env.box?.min[0]).toBeLessThanOrEqual(0 - 0.05 + 1e-12);
    // The sprinters are fast on 2 steps in a row: a monitor waiting for 3 stops none of them.
    const patient = fitCalibration({
      ...base,
      episodes: eps,
      monitor: { patience: 3, stepMetres: 0.015 },
    });
    expect(patient.envelope?.evaluate.stopped).toBe(0);
    // Without steps, or without monitor settings, no envelope: older files stay as they were.
    expect(fitCalibration({ ...base, episodes: episodes(300, 0.03) }).envelope).toBeUndefined();
    expect(fitCalibration({ ...base, episodes: eps }).envelope).toBeUndefined();
  });

  it("refuses a degenerate zone: benign motion reaches the hazard", () => {
    expect(() =>
      fitCalibration({
        ...base,
        episodes: episodes(300, 0.0, "touch").map((e) => ({
          ...e,
          positions: [...e.positions, HAZARD],
        })),
      }),
    ).toThrow(
      expect.objectContaining({
        code: "calibration/degenerate",
        message: expect.stringMatching(/no box with 1 cm of room/),
      }),
    );
  });

  it("refuses a task without a hazard position: a zone must contain its hazard", () => {
    const { hazardPos: _, ...noHazard } = base;
    expect(() => fitCalibration({ ...noHazard, episodes: episodes(300, 0.03) })).toThrow(
      expect.objectContaining({ code: "calibration/degenerate" }),
    );
  });

  it("refuses too small a split with the numbers needed", () => {
    expect(() => fitCalibration({ ...base, episodes: episodes(200, 0.03) })).toThrow(
      expect.objectContaining({
        code: "calibration/too-few-scenes",
        message: expect.stringMatching(
          /the evaluate split has 6[67] episode\(s\) with a pose, 100 needed/,
        ),
      }),
    );
  });
});

describe("split counts", () => {
  it("needs 99 / 99 / 100 at 1%, and states the seeds that give them", () => {
    expect(splitNeeds(0.01)).toEqual({ fit: 99, threshold: 99, evaluate: 100 });
    expect(seedsNeeded(0.01, 1000, 10_000)).toBe(299);
    expect(splitCounts(1000, 299, 10_000)).toEqual({ fit: 99, threshold: 100, evaluate: 100 });
    expect(seedsNeeded(0.01, 0, 10_000)).toBe(300);
    // Too few scenes can never give the splits.
    expect(seedsNeeded(0.01, 0, 2, 0, 10_000)).toBeNull();
  });
});
