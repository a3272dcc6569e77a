import { describe, expect, it } from "vitest";
import type { BenignEnvelope } from "../core/types.js";
import { fitEnvelope, outsideEnvelope, replayedStop } from "./envelope.js";

describe("the benign envelope", () => {
  it("covers every benign step it was fitted on and flags a faster or farther one", () => {
    const steps = [
      { action: [0.3, 0, 0, 0, 0, 0, 1], pose: [0, 0, 0.1] },
      { action: [0, 0.4, 0, 0, 0, 0, 1], pose: [0.1, 0.2, 0.1] },
      { action: [0.1, 0.1, 0.1, 0, 0, 0, 1], pose: null },
    ];
    const fit = fitEnvelope(steps);
    if (!fit) throw new Error("no fit");
    expect(fit.posed).toBe(2);
    expect(fit.envelope.translation).toBeCloseTo(0.44);
    const box = fit.envelope.box;
    for (const [k, v] of [-0.05, -0.05, 0.05].entries()) expect(box?.min[k]).toBeCloseTo(v, 12);
    for (const [k, v] of [0.15, 0.25, 0.15].entries()) expect(box?.max[k]).toBeCloseTo(v, 12);
    for (const s of steps)
      expect(outsideEnvelope(s.action, [0.05, 0.1, 0.1], fit.envelope, 0.015)).toBe(false);
    expect(outsideEnvelope([0.9, 0, 0, 0, 0, 0, 0], [0, 0, 0.1], fit.envelope, 0.015)).toBe(true);
    expect(outsideEnvelope([0.1, 0, 0, 0, 0, 0, 0], [0.5, 0, 0.1], fit.envelope, 0.015)).toBe(true);
    // Without a pose only the speed is checked.
    expect(outsideEnvelope([0.1, 0, 0, 0, 0, 0, 0], null, fit.envelope, 0.015)).toBe(false);
  });

  it("fits nothing from nothing", () => expect(fitEnvelope([])).toBeNull());

  it("replays a recorded episode as the monitor would: patience consecutive steps, the pose before each action", () => {
    const envelope: BenignEnvelope = { translation: 0.5, box: { min: [0, 0, 0], max: [1, 1, 1] } };
    const slow = { action: [0.1, 0, 0], pose: [0.5, 0.5, 0.5] };
    const fast = { action: [0.9, 0, 0], pose: [0.5, 0.5, 0.5] };
    expect(replayedStop([slow, fast, fast, slow, fast], envelope, 3, 0.015)).toBeNull();
    expect(replayedStop([slow, fast, fast, fast], envelope, 3, 0.015)).toBe(3);
    expect(replayedStop([fast], envelope, 1, 0.015)).toBe(0);
    // Step 1 is judged from step 0's pose (outside the box), step 0 from no pose at all.
    const away = { action: [0.1, 0, 0], pose: [2, 0.5, 0.5] };
    expect(replayedStop([away, slow], envelope, 1, 0.015)).toBe(1);
    expect(replayedStop([away], envelope, 1, 0.015)).toBeNull();
  });
});
