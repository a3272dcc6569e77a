import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { formatEta, progressLine, progressReporter, rateAndEta } from "./progress.js";

function sink(): { stream: Writable; lines: () => string[] } {
  let text = "";
  const stream = new Writable({
    write(chunk, _enc, cb) {
      text += chunk;
      cb();
    },
  });
  return { stream, lines: () => text.split("\n").filter(Boolean) };
}

describe("progress", () => {
  it("formats an ETA people can read, and none before the rate is known", () => {
    expect(formatEta(null)).toBe("—");
    expect(formatEta(Number.POSITIVE_INFINITY)).toBe("—");
    expect(formatEta(42)).toBe("42s");
    expect(formatEta(65)).toBe("1m05s");
    expect(formatEta(7380)).toBe("2h03m");
  });

  it("rates only the episodes played by this invocation (a resume starts from what was saved)", () => {
    expect(rateAndEta(10, 10, 20, 5)).toEqual({ rate: null, eta: null });
    expect(rateAndEta(15, 10, 20, 5)).toEqual({ rate: 1, eta: 5 });
    expect(rateAndEta(20, 20, 20, 0)).toEqual({ rate: null, eta: 0 });
  });

  it("off a terminal prints a line every 5% and the last one once, however often it is told", () => {
    let t = 0;
    const { stream, lines } = sink();
    const p = progressReporter("lines", stream, { now: () => t, everyMs: 10_000 });
    for (let done = 0; done <= 40; done++) {
      t += 100;
      p.update(done, 40);
    }
    // The runner reports the final count twice (episode finished, then the run flushed).
    p.update(40, 40);
    p.update(40, 40);
    p.stop();
    const got = lines();
    expect(got.filter((l) => l.startsWith("progress: 40/40"))).toHaveLength(1);
    expect(got[0]).toBe(progressLine(0, 40, 0, null, null));
    expect(got).toHaveLength(21); // 0, 2, 4, …, 40
  });

  it("repeats an unchanged count only as the heartbeat, after the interval", () => {
    let t = 0;
    const { stream, lines } = sink();
    const p = progressReporter("lines", stream, { now: () => t, everyMs: 10_000 });
    p.update(3, 100, 1);
    t = 5_000;
    p.update(3, 100, 1);
    t = 10_500;
    p.update(3, 100, 1);
    p.stop();
    expect(lines()).toHaveLength(2);
    expect(lines()[1]).toMatch(/^progress: 3\/100 episodes \(3%\), — ep\/s, ETA —, 1 error$/);
  });
});
