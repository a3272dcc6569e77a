/**
 * `attack --dry-run` refuses what the real run refuses, on the same inputs, with the same error:
 * a table over the refusals a run makes before its first episode (training scenes, replayed
 * scenes, calibration scenes, requirements, an unreachable server, calibrations required, a
 * directory that holds something else). The real run is asked too, and must refuse before it
 * plays (no journal); a plan that passes the dry run is played by the real run.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

let root = "";
let calib = "";

beforeAll(() => {
  root = tempDir();
  // A real calibration (11 benign reach episodes at a 30% target): its fit and threshold
  // scenes are what a scored run may not replay.
  calib = join(root, "calib");
  const c = runCli(
    ["calibrate", "--policy", "scripted", "--suite", "reach", "--tasks", "reach_red"].concat([
      "--target-fpr",
      "0.3",
      "--workers",
      "1",
      "--out",
      calib,
    ]),
  );
  expect(c.code, c.stderr).toBe(0);
  const busy = join(root, "busy");
  mkdirSync(busy);
  writeFileSync(join(busy, "notes.txt"), "mine\n");
}, 300_000);

const REACH = ["--policy", "scripted", "--suite", "reach", "--tasks", "reach_red"];

/** Each row: the refusal, the arguments (without --out), the error code and words expected. */
const ROWS: {
  name: string;
  args: () => string[];
  says: RegExp;
  out?: () => string;
  /** The exit status: 2 (bad input) unless said; a server that does not answer is 4. */
  exit?: number;
}[] = [
  {
    name: "training scenes (tiny-vla at --seeds 25)",
    args: () => ["--tasks", "kitchen_red_block", "--attacks", "none", "--seeds", "25"],
    says: /was trained on scenes 20-99 of 'tabletop'/,
  },
  {
    name: "a replayed scene for a deterministic policy (--repeats 2)",
    args: () => [...REACH, "--attacks", "none", "--seeds", "2", "--repeats", "2"],
    says: /deterministic/,
  },
  {
    name: "calibration scenes scored (--calib, seeds on its fit split)",
    args: () => [...REACH, "--attacks", "none", "--seed", "1000", "--seeds", "3", "--calib", calib],
    says: /calibration/,
  },
  {
    name: "a defense the policy cannot serve (weight_guard on scripted)",
    args: () => [...REACH, "--attacks", "none", "--seeds", "2", "--defenses", "weight_guard"],
    says: /weight_guard/,
  },
  {
    name: "an unreachable server",
    args: () =>
      ["--policy", "openpi", "--suite", "tabletop", "--tasks", "kitchen_red_block"].concat([
        "--attacks",
        "none",
        "--seeds",
        "1",
        "--policy-url",
        "ws://127.0.0.1:9",
      ]),
    says: /cannot reach the openpi server/,
    exit: 4,
  },
  {
    name: "--require-calibrated without calibrations",
    args: () => [...REACH, "--attacks", "none", "--seeds", "2", "--require-calibrated"],
    says: /--require-calibrated: no calibration/,
  },
  {
    name: "an --out that holds something else",
    args: () => [...REACH, "--attacks", "none", "--seeds", "2"],
    out: () => join(root, "busy"),
    says: /is not empty and holds no Provael run/,
  },
];

/** The error line: `provael: error: …` with the code's words. */
const errorLine = (stderr: string) =>
  stderr.split("\n").find((l) => l.startsWith("provael: error:")) ?? stderr;

describe("attack --dry-run refuses what the real run refuses", () => {
  it.each(ROWS)(
    "$name",
    ({ args, says, out, exit }) => {
      const dir = out ? out() : join(tempDir(), "run");
      const dry = runCli(["attack", ...args(), "--out", dir, "--dry-run"]);
      const real = runCli(["attack", ...args(), "--out", dir, "--no-html"]);
      expect(errorLine(dry.stderr)).toMatch(says);
      expect(dry.code).toBe(exit ?? 2);
      expect(real.code, real.stderr).toBe(dry.code);
      expect(errorLine(real.stderr)).toBe(errorLine(dry.stderr));
      expect(existsSync(join(dir, "journal.jsonl"))).toBe(false);
    },
    300_000,
  );

  it("a plan the dry run accepts, with its time estimated, is played", () => {
    const dir = join(tempDir(), "run");
    const args = [...REACH, "--attacks", "none", "--seeds", "2", "--out", dir];
    const dry = runCli(["attack", ...args, "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/estimated time: (about \d+ s|under a second) for 2 episode\(s\)/);
    expect(dry.stdout).toContain("documented cost of scripted on reach");
    const real = runCli([...["attack", ...args], "--no-html"]);
    expect(real.code, real.stderr).toBe(0);
  }, 300_000);
});
