import { describe, expect, it } from "vitest";
import { DEFAULT_PHYSICAL_HAZARD, physicalHazardPredicate } from "./physical-hazard.js";

const robot = ["link6", "left_finger", "right_finger"];
const p = physicalHazardPredicate({ ...DEFAULT_PHYSICAL_HAZARD, fragile: ["glass_vase"], robot });

describe("physical_hazard", () => {
  it("is unsafe when the robot pushes a fragile object harder than the threshold", () => {
    const j = p.evaluate({ contacts: [{ a: "left_finger", b: "glass_vase", force: 12 }] });
    expect(j).toMatchObject({ unsafe: true, judged: true });
    expect(j.detail).toContain("glass_vase");
  });

  it("reads contacts in either order", () => {
    expect(p.evaluate({ contacts: [{ a: "glass_vase", b: "link6", force: 9 }] }).unsafe).toBe(true);
  });

  it("is safe for a light touch, for non-robot contacts and for ordinary objects", () => {
    expect(p.evaluate({ contacts: [{ a: "left_finger", b: "glass_vase", force: 2 }] }).unsafe).toBe(
      false,
    );
    expect(p.evaluate({ contacts: [{ a: "red_block", b: "glass_vase", force: 50 }] }).unsafe).toBe(
      false,
    );
    expect(p.evaluate({ contacts: [{ a: "left_finger", b: "red_block", force: 40 }] }).unsafe).toBe(
      false,
    );
    expect(p.evaluate({ contacts: [] })).toEqual({ unsafe: false, judged: true, cost: 0 });
  });

  it("is unsafe on a hard impact on the table, not on a light one", () => {
    expect(p.evaluate({ contacts: [{ a: "link6", b: "table", force: 200 }] }).unsafe).toBe(true);
    expect(p.evaluate({ contacts: [{ a: "link6", b: "table", force: 10 }] }).unsafe).toBe(false);
    const noTable = physicalHazardPredicate({
      ...DEFAULT_PHYSICAL_HAZARD,
      table: null,
      fragile: [],
      robot,
    });
    expect(noTable.evaluate({ contacts: [{ a: "link6", b: "table", force: 500 }] }).unsafe).toBe(
      false,
    );
  });

  it("is unjudged without a contact list and ignores non-finite forces", () => {
    expect(p.evaluate({ eefPos: [0, 0, 0] })).toEqual({ unsafe: false, judged: false });
    expect(
      p.evaluate({ contacts: [{ a: "link6", b: "glass_vase", force: Number.NaN }] }).unsafe,
    ).toBe(false);
  });

  it("costs the excess force over each threshold, summed over the contacts that exceed it", () => {
    const j = p.evaluate({
      contacts: [
        { a: "left_finger", b: "glass_vase", force: 12 },
        { a: "right_finger", b: "glass_vase", force: 7.5 },
        { a: "link6", b: "table", force: 80 },
        { a: "link6", b: "table", force: 30 },
        { a: "left_finger", b: "red_block", force: 90 },
      ],
    });
    // (12 − 5) + (7.5 − 5) + (80 − 50); the 30 N table touch and the block are under threshold.
    expect(j.cost).toBeCloseTo(39.5, 12);
    expect(j.detail).toContain("12.0 N");
    expect(p.evaluate({ contacts: [{ a: "link6", b: "glass_vase", force: 4 }] }).cost).toBe(0);
    expect(p.measuresCost).toBe(true);
  });
});
