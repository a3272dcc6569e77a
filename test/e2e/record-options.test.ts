import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

/** `provael record --policy-option`: the demonstrating policy's own options, checked first. */
describe("provael record --policy-option (built CLI)", () => {
  const GREEN_BOX = [
    "record",
    "--suite",
    "tabletop",
    "--policy",
    "scripted",
    "--tasks",
    "kitchen_green_box",
    "--scenes",
    "21:22",
    "--episodes",
    "1",
    "--json",
  ];

  it("refuses an option the policy does not read, or a value it does not know, and writes nothing", () => {
    const w = tempDir();
    const unknown = runCli([
      ...GREEN_BOX,
      "--policy-option",
      "grasp=nearest",
      "--out",
      join(w, "a"),
    ]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(
      /policy 'scripted' has no option 'grasp'; it reads 'grasp_side'/,
    );
    expect(existsSync(join(w, "a"))).toBe(false);
    const bad = runCli([...GREEN_BOX, "--policy-option", "grasp_side=wide", "--out", join(w, "b")]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/grasp_side must be narrow or nearest, got 'wide'/);
    expect(existsSync(join(w, "b"))).toBe(false);
  }, 60_000);

  it("passes grasp_side=nearest to the expert: scene 21's box is carried across its long side, a different demonstration", () => {
    const w = tempDir();
    const play = (out: string, extra: string[]) => {
      const r = runCli([...GREEN_BOX, ...extra, "--out", join(w, out)]);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as { episodes: number; frames: number };
    };
    const narrow = play("narrow", []);
    const nearest = play("nearest", ["--policy-option", "grasp_side=nearest"]);
    expect(narrow.episodes).toBe(1);
    expect(nearest.episodes).toBe(1);
    // The wrist turns less and the fingers close wider: the episode takes a different length.
    expect(nearest.frames).not.toBe(narrow.frames);
  }, 120_000);
});
