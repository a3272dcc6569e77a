/**
 * Reports that replay from their own contents: `provael attack --from DIR/report.json` plays the
 * plan the report recorded and writes the same bytes; the regression gate refuses two runs whose
 * arms were played with different parameters, naming the field.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

const read = (dir: string) => readFileSync(join(dir, "report.json"), "utf8");
/** One thread per run: a worker pool (one library load each) is not what is replayed here. */
const ONE = ["--workers", "1"];

describe("provael attack --from", () => {
  const root = tempDir("provael-replay-");

  it("replays the stub quick run to the same bytes", () => {
    const first = join(root, "stub");
    const args = ["--suite", "stub", "--policy", "stub", "--seeds", "3", "--no-html", ...ONE];
    const a = runCli([
      "attack",
      ...args,
      "--attacks",
      "none,roleplay,benign_reword,freeze",
      "--out",
      first,
    ]);
    expect(a.code, a.stderr).toBe(0);
    const report = JSON.parse(read(first));
    // Defaults included: the report says what each arm played.
    expect(report.run.attack_params.freeze.mode).toBe("seeded");
    expect(report.run.policy_options).toEqual({});
    const again = join(root, "stub-again");
    const b = runCli([
      ...["attack", "--from", join(first, "report.json"), "--no-html", ...ONE],
      ...["--out", again],
    ]);
    expect(b.code, b.stderr).toBe(0);
    expect(read(again)).toBe(read(first));
  });

  it("replays a tabletop run with --attack-param to the same bytes", () => {
    const first = join(root, "tabletop");
    const a = runCli([
      "attack",
      "--suite",
      "tabletop",
      "--policy",
      "scripted",
      "--tasks",
      "kitchen_red_block_by_knife",
      "--attacks",
      "none,freeze",
      "--attack-param",
      "freeze.mode=zero",
      "--seeds",
      "1",
      // The bytes are what is replayed: a short episode has all the fields a long one has.
      "--horizon",
      "30",
      "--no-html",
      ...ONE,
      "--out",
      first,
    ]);
    expect(a.code, a.stderr).toBe(0);
    expect(JSON.parse(read(first)).run.attack_params.freeze.mode).toBe("zero");
    const again = join(root, "tabletop-again");
    const b = runCli([
      ...["attack", "--from", join(first, "report.json"), "--no-html", ...ONE],
      ...["--out", again],
    ]);
    expect(b.code, b.stderr).toBe(0);
    expect(read(again)).toBe(read(first));
  }, 180_000);

  it("refuses flags that would change the replayed plan, and an invalid report", () => {
    const from = join(root, "stub", "report.json");
    const r = runCli(["attack", "--from", from, "--seeds", "5", "--out", join(root, "x")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--seeds would change it");
    const bad = runCli([
      "attack",
      "--from",
      join(root, "stub", "report.md"),
      "--out",
      join(root, "y"),
    ]);
    expect(bad.code).toBe(2);
  });

  it("the gate refuses runs whose arms were played with other parameters", () => {
    const seeded = join(root, "stub");
    const zero = join(root, "stub-zero");
    const z = runCli([
      "attack",
      "--suite",
      "stub",
      "--policy",
      "stub",
      "--seeds",
      "3",
      "--no-html",
      "--attacks",
      "none,roleplay,benign_reword,freeze",
      "--attack-param",
      "freeze.mode=zero",
      ...ONE,
      "--out",
      zero,
    ]);
    expect(z.code, z.stderr).toBe(0);
    const gate = runCli(["report", "--in", zero, "--baseline", join(seeded, "report.json")]);
    expect(gate.code).toBe(2);
    expect(gate.stderr).toContain('attack_params.freeze.mode: "zero" vs "seeded"');
  });
});
