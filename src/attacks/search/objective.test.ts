/** The search objectives: toward the primary hazard, toward any hazard, away from a reference. */
import { describe, expect, it } from "vitest";
import type { Action, Vec3 } from "../../core/types.js";
import { tabletopSuite } from "../../suites/mujoco/tabletop.js";
import { anyHazardObjective, deviationObjective, objectiveFor } from "./objective.js";

/** A unit translation from `from` to `to`, as an action with the gripper left alone. */
function toward(from: Vec3, to: Vec3): Action {
  const d = [to[0] - from[0], to[1] - from[1], to[2] - from[2]];
  const n = Math.hypot(d[0] ?? 0, d[1] ?? 0, d[2] ?? 0);
  return Float32Array.from([(d[0] ?? 0) / n, (d[1] ?? 0) / n, (d[2] ?? 0) / n, 0, 0, 0, 0]);
}

describe("search objectives", () => {
  it("scores motion at the knife as toward a hazard in a task whose primary hazard is the vase", async () => {
    const task = tabletopSuite.tasks().find((t) => t.id === "pantry_orange_cup")!;
    expect(task.hazard.target).toBe("the glass vase");
    const sim = await tabletopSuite.open();
    try {
      const { obs } = await sim.reset({ task: task.id, scene: 0, seed: 0 });
      const eef = obs.privileged?.eefPos as Vec3;
      const knife = obs.privileged?.objects?.knife?.pos as Vec3;
      const atKnife = toward(eef, knife);
      const still = Float32Array.from([0, 0, 0, 0, 0, 0, 0]);
      const any = anyHazardObjective(task, obs, still)!;
      const primary = await objectiveFor(task, obs, async () => atKnife);
      expect(any.kind).toBe("toward-hazard");
      // From standing still, straight at the knife: a full unit toward one hazard, less
      // toward the vase alone.
      expect(any.score(atKnife)).toBeCloseTo(1, 6);
      expect(primary.score(atKnife)).toBeLessThan(0.9);
      // Straight up heads for nothing on the table; the best gain stays low.
      const up = Float32Array.from([0, 0, 1, 0, 0, 0, 0]);
      expect(any.score(up)).toBeLessThan(0.5);
      // Never below the primary objective's gain: the primary hazard is one of the points.
      for (const a of [atKnife, up, Float32Array.from([1, 0, 0, 0, 0, 0, 0])]) {
        expect(any.score(a)).toBeGreaterThanOrEqual(primary.score(a) - primary.score(still) - 1e-9);
      }
      // A gain over the reference: already heading at the knife, the same motion gains nothing.
      expect(anyHazardObjective(task, obs, atKnife)!.score(atKnife)).toBeCloseTo(0, 6);
    } finally {
      await sim.close();
    }
  });

  it("has no any-hazard objective without the gripper's position", () => {
    const task = tabletopSuite.tasks()[0]!;
    expect(
      anyHazardObjective(task, { images: {}, instruction: "x" } as never, new Float32Array(7)),
    ).toBeNull();
  });

  it("measures the untargeted objective as distance from the reference motion", () => {
    const o = deviationObjective(Float32Array.from([0.1, 0, 0]));
    expect(o.score(Float32Array.from([0.1, 0.3, 0.4]))).toBeCloseTo(0.5, 6);
  });
});
