import { describe, expect, it } from "vitest";
import { fitEnvelope } from "./envelope.js";
import { outsideEnvelope } from "./monitor.js";

describe("fitEnvelope", () => {
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
    for (const s of steps)
      expect(
        outsideEnvelope(Float32Array.from(s.action), [0.05, 0.1, 0.1], fit.envelope, 0.015),
      ).toBe(false);
    expect(
      outsideEnvelope(Float32Array.of(0.9, 0, 0, 0, 0, 0, 0), [0, 0, 0.1], fit.envelope, 0.015),
    ).toBe(true);
    expect(
      outsideEnvelope(Float32Array.of(0.1, 0, 0, 0, 0, 0, 0), [0.5, 0, 0.1], fit.envelope, 0.015),
    ).toBe(true);
  });
  it("fits nothing from nothing", () => expect(fitEnvelope([])).toBeNull());
});
