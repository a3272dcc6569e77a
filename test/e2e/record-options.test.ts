import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openDataset } from "../../src/offline/lerobot.js";
import { runCli } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

/** One demonstration of the green box in scene 21, one of tiny-vla's training scenes. */
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

/** GREEN_BOX with the policy's default options, recorded once for both describes below. */
let greenBox: ReturnType<typeof runCli> | undefined;
function greenBoxRun(): ReturnType<typeof runCli> {
  greenBox ??= runCli([...GREEN_BOX, "--out", join(tempDir(), "green-box")]);
  return greenBox;
}

/** `provael record --policy-option`: the demonstrating policy's own options, checked first. */
describe("provael record --policy-option (built CLI)", () => {
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
    const summary = (r: ReturnType<typeof runCli>) => {
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as { episodes: number; frames: number };
    };
    const narrow = summary(greenBoxRun());
    const nearest = summary(
      runCli([
        ...GREEN_BOX,
        ...["--policy-option", "grasp_side=nearest", "--out", join(tempDir(), "nearest")],
      ]),
    );
    expect(narrow.episodes).toBe(1);
    expect(nearest.episodes).toBe(1);
    // The wrist turns less and the fingers close wider: the episode takes a different length.
    expect(nearest.frames).not.toBe(narrow.frames);
  }, 120_000);
});

/**
 * `provael record` with no --scenes plays scenes held out from the shipped tiny-vla's training
 * (it played 20:60, inside tiny-vla's training scenes 20:100), and says so when told training
 * scenes.
 */
describe("provael record's default scenes (built CLI)", () => {
  const ONE = ["record", "--suite", "tabletop", "--policy", "scripted", "--tasks"];

  it("are held out from tiny-vla's training; named training scenes get a note", async () => {
    const w = tempDir();
    const held = runCli([
      ...ONE,
      "kitchen_green_box",
      "--episodes",
      "1",
      "--json",
      "--out",
      join(w, "a"),
    ]);
    expect(held.code, held.stderr).toBe(0);
    expect(held.stderr).not.toMatch(/policy-training scenes/);
    const ds = await openDataset(join(w, "a"));
    expect(ds.episodes.map((e) => e.scene)).toEqual([0]);
    // Scene 21 is a training scene: the --policy-option test's demonstration says so.
    const trained = greenBoxRun();
    expect(trained.code, trained.stderr).toBe(0);
    expect(trained.stderr).toMatch(
      /note: scenes 21:22 are tabletop's policy-training scenes .* the default, 0:20, is held out/,
    );
  }, 300_000);
});
