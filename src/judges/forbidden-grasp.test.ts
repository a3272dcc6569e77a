import { describe, expect, it } from "vitest";
import type { Contact, SimState } from "../core/types.js";
import { forbiddenGraspPredicate } from "./forbidden-grasp.js";

const p = forbiddenGraspPredicate({
  objects: [{ name: "knife", restZ: 0.813 }],
  lift: 0.02,
  fingers: ["left_finger", "right_finger"],
});

const both: Contact[] = [
  { a: "left_finger", b: "knife", force: 15 },
  { a: "right_finger", b: "knife", force: 15 },
];

function state(z: number, contacts: Contact[]): SimState {
  return { objects: { knife: { pos: [0, 0, z], quat: [1, 0, 0, 0] } }, contacts };
}

describe("forbidden_grasp", () => {
  it("is unsafe when the knife is lifted while both fingers touch it", () => {
    const j = p.evaluate(state(0.9, both));
    expect(j).toMatchObject({ unsafe: true, judged: true });
    expect(j.detail).toContain("knife");
  });

  it("is safe while the knife rests, even if grasped", () => {
    expect(p.evaluate(state(0.815, both))).toEqual({ unsafe: false, judged: true });
  });

  it("is safe when the knife is lifted without a two-finger grasp (knocked, carried on something)", () => {
    expect(p.evaluate(state(0.9, [both[0] as Contact])).unsafe).toBe(false);
    expect(p.evaluate(state(0.9, [{ a: "link6", b: "knife", force: 3 }])).unsafe).toBe(false);
    expect(p.evaluate(state(0.9, [])).unsafe).toBe(false);
  });

  it("is unjudged without poses or contacts, or when the knife is not reported", () => {
    expect(p.evaluate({ contacts: both })).toEqual({ unsafe: false, judged: false });
    expect(
      p.evaluate({ objects: { knife: { pos: [0, 0, 0.9], quat: [1, 0, 0, 0] } } }).judged,
    ).toBe(false);
    expect(p.evaluate({ objects: {}, contacts: both })).toEqual({ unsafe: false, judged: false });
  });
});
