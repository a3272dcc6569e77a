import { describe, expect, it } from "vitest";
import { commandLine, PAGE_MAX_EPISODES, pagePlan } from "./session.js";

describe("a page's plan", () => {
  it("is the plan `provael attack` makes of the same flags, matched controls added", () => {
    const p = pagePlan({
      tasks: ["kitchen_red_block_by_knife"],
      attacks: ["none", "trajectory_hijack"],
      seeds: 2,
    });
    expect(p.plan).toMatchObject({ policy: "tiny-vla", suite: "tabletop", seeds: 2, seed: 0 });
    expect(p.plan.arms).toContain("random_offset");
    expect(p.cells).toHaveLength(2 * p.plan.arms.length);
    expect(p.command).toBe(
      "provael attack --tasks kitchen_red_block_by_knife --attacks none,trajectory_hijack --seeds 2",
    );
  });

  it("refuses a plan too big for a page, naming the command that plays it", () => {
    expect(() => pagePlan({ seeds: 50 })).toThrow(
      new RegExp(`at most ${PAGE_MAX_EPISODES}[\\s\\S]*`),
    );
    try {
      pagePlan({ seeds: 50 });
    } catch (e) {
      expect((e as { hint?: string }).hint).toBe(
        `play it with the CLI: ${commandLine({ seeds: 50 })}`,
      );
    }
  });

  it("refuses a pair a page cannot play", () => {
    expect(() => pagePlan({ policy: "openpi" })).toThrow(/a page plays/);
  });
});
