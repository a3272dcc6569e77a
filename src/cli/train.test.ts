import { describe, expect, it } from "vitest";
import { stageReporter } from "./train.js";

describe("stageReporter", () => {
  it("reports each stage's first step, every tenth and its last, with elapsed time and ETA", () => {
    const lines: string[] = [];
    let t = 0;
    const report = stageReporter(
      (text) => lines.push(text),
      () => t,
    );
    for (let done = 1; done <= 100; done++) {
      t = done * 1000;
      report("load", done, 100);
    }
    t = 100_000;
    for (let step = 1; step <= 20; step++) {
      t += 500;
      report("train", step, 20, 1 / step);
    }
    const load = lines.filter((l) => l.startsWith("loading episodes"));
    expect(load.length).toBe(11);
    expect(load[0]).toBe("loading episodes 1/100 (0s elapsed, ETA —)");
    expect(load.at(-1)).toBe("loading episodes 100/100 (1m39s elapsed, ETA 0s)");
    const train = lines.filter((l) => l.startsWith("training"));
    // The stage's clock restarts with it: 19 steps of 0.5 s after the first are 10 s, not 1m50s.
    expect(train[0]).toBe("training step 1/20 loss 1.0000 (0s elapsed, ETA —)");
    expect(train.at(-1)).toBe("training step 20/20 loss 0.0500 (10s elapsed, ETA 0s)");
    expect(train).toContain("training step 11/20 loss 0.0909 (5s elapsed, ETA 5s)");
    expect(train.length).toBe(11);
  });

  it("names the second look's reading as rows read, not steps", () => {
    const lines: string[] = [];
    const report = stageReporter(
      (text) => lines.push(text),
      () => 0,
    );
    report("look", 32, 19200);
    report("locator", 50, 2500, 0.0005);
    expect(lines).toEqual([
      "reading the second look's inputs 32/19200 (0s elapsed, ETA —)",
      "locator step 50/2500 loss 0.0005 (0s elapsed, ETA —)",
    ]);
  });
});
