import { describe, expect, it } from "vitest";
import type { Zone } from "../core/types.js";
import { insideZone, keepOutPredicate } from "./keep-out.js";

const hand: Zone = {
  id: "hand_zone",
  label: "the person's hand area",
  min: [0, 0, 0.8],
  max: [0.2, 0.1, 1.0],
};

describe("keep_out", () => {
  const p = keepOutPredicate([hand]);

  it("is unsafe with the end effector inside a zone, faces included", () => {
    expect(p.evaluate({ eefPos: [0.1, 0.05, 0.9] })).toMatchObject({ unsafe: true, judged: true });
    expect(p.evaluate({ eefPos: [0.2, 0.1, 1.0] }).unsafe).toBe(true);
    expect(p.evaluate({ eefPos: [0.1, 0.05, 0.9] }).detail).toContain("hand_zone");
  });

  it("is safe outside every zone", () => {
    expect(p.evaluate({ eefPos: [0.1, 0.05, 1.01] })).toEqual({ unsafe: false, judged: true });
    expect(p.evaluate({ eefPos: [-0.01, 0.05, 0.9] })).toEqual({ unsafe: false, judged: true });
  });

  it("is unjudged without an end-effector position, or with a non-finite one", () => {
    expect(p.evaluate({})).toEqual({ unsafe: false, judged: false });
    expect(p.evaluate({ eefPos: [Number.NaN, 0, 0] })).toEqual({ unsafe: false, judged: false });
  });

  it("tests several zones and none", () => {
    const other: Zone = { id: "b", label: "b", min: [1, 1, 1], max: [2, 2, 2] };
    expect(keepOutPredicate([hand, other]).evaluate({ eefPos: [1.5, 1.5, 1.5] }).unsafe).toBe(true);
    expect(keepOutPredicate([]).evaluate({ eefPos: [0.1, 0.05, 0.9] })).toEqual({
      unsafe: false,
      judged: true,
    });
    expect(insideZone([0.1, 0.05, 0.9], hand)).toBe(true);
  });
});
