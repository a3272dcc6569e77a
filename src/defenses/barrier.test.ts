import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Vec3 } from "../core/types.js";
import { type Box, project, signedDistance } from "./barrier.js";

const box: Box = { id: "z", min: [0, 0, 0], max: [1, 1, 1] };
const vec = fc.tuple(
  fc.double({ min: -3, max: 4, noNaN: true }),
  fc.double({ min: -3, max: 4, noNaN: true }),
  fc.double({ min: -3, max: 4, noNaN: true }),
);

describe("barrier projection", () => {
  it("signed distance: positive outside, negative inside, with a unit gradient", () => {
    expect(signedDistance([2, 0.5, 0.5], box).h).toBeCloseTo(1);
    expect(signedDistance([0.5, 0.5, 0.9], box)).toEqual({
      h: -0.09999999999999998,
      grad: [0, 0, 1],
    });
    const g = signedDistance([2, 2, 0.5], box).grad;
    expect(Math.hypot(...g)).toBeCloseTo(1);
  });

  it("leaves motion away from or along the box unchanged", () => {
    const p: Vec3 = [1.5, 0.5, 0.5];
    expect(project(p, [0.1, 0, 0], [box], 0.5, 1).changed).toBe(false);
    expect(project(p, [0, 0.1, 0], [box], 0.5, 1).changed).toBe(false);
  });

  it("removes only the component toward the box, keeping the distance above (1 − γ) h", () => {
    const p: Vec3 = [1.1, 0.5, 0.5];
    const out = project(p, [-0.5, 0.2, 0], [box], 0.5, 1);
    expect(out.changed).toBe(true);
    expect(out.active).toEqual(["z"]);
    expect(out.delta[1]).toBeCloseTo(0.2);
    const next: Vec3 = [p[0] + out.delta[0], p[1] + out.delta[1], p[2] + out.delta[2]];
    expect(signedDistance(next, box).h).toBeGreaterThanOrEqual(0.05 - 1e-9);
  });

  it("for any start outside and any command, the next point satisfies the barrier condition and the speed cap", () => {
    fc.assert(
      fc.property(vec, vec, (p, d) => {
        const h0 = signedDistance(p as Vec3, box).h;
        fc.pre(h0 > 1e-6);
        const out = project(p as Vec3, d as Vec3, [box], 0.3, 0.5);
        const next: Vec3 = [p[0] + out.delta[0], p[1] + out.delta[1], p[2] + out.delta[2]];
        expect(Math.hypot(...out.delta)).toBeLessThanOrEqual(0.5 + 1e-9);
        expect(signedDistance(next, box).h).toBeGreaterThanOrEqual(0.7 * h0 - 1e-7);
      }),
      { numRuns: 300 },
    );
  });

  it("between two boxes with no admissible motion toward them it commands none", () => {
    const a: Box = { id: "a", min: [-1, -1, -1], max: [0, 1, 1] };
    const b: Box = { id: "b", min: [0.2, -1, -1], max: [1.2, 1, 1] };
    const out = project([0.1, 0, 0], [0.05, 0, 0], [a, b], 0.5, 1);
    const next: Vec3 = [0.1 + out.delta[0], out.delta[1], out.delta[2]];
    expect(signedDistance(next, a).h).toBeGreaterThanOrEqual(0.05 - 1e-9);
    expect(signedDistance(next, b).h).toBeGreaterThanOrEqual(0.05 - 1e-9);
  });
});
