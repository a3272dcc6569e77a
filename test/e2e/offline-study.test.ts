import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

describe("provael offline-study (built CLI)", () => {
  it("records, registers a plan, runs it, and refuses the plan once edited", () => {
    const w = tempDir();
    const data = join(w, "demos");
    expect(
      runCli([
        "record",
        "--suite",
        "stub",
        "--policy",
        "stub",
        "--scenes",
        "0:4",
        "--episodes",
        "40",
        "--out",
        data,
      ]).code,
    ).toBe(0);
    const plan = join(w, "plan.yaml");
    const p = runCli([
      "offline-study",
      "plan",
      "--dataset",
      data,
      "--policy",
      "stub",
      "--dims",
      "0",
      "--stride",
      "1",
      "--out",
      plan,
    ]);
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout).toMatch(/^registered .*plan.yaml \(sha256:[0-9a-f]{64}\) at \d{4}-/);
    const r = runCli(["offline-study", "run", "--plan", plan, "--out", join(w, "study")]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /'roleplay' pushed the policy's one-step command outside the benign envelope/,
    );
    const result = JSON.parse(readFileSync(join(w, "study", "offline-study.json"), "utf8"));
    const reg = JSON.parse(readFileSync(`${plan}.registration.json`, "utf8"));
    expect(result.plan).toEqual({ digest: reg.plan_digest, registered_at: reg.registered_at });
    writeFileSync(plan, readFileSync(plan, "utf8").replace("stride: 1", "stride: 2"));
    const edited = runCli(["offline-study", "run", "--plan", plan, "--out", join(w, "again")]);
    expect(edited.code).toBe(2);
    expect(edited.stderr).toMatch(/changed after it was registered/);
  }, 120_000);

  it("refuses a folder of bare video files with exit 2 and says why", () => {
    const w = tempDir();
    writeFileSync(join(w, "episode_0.mp4"), "");
    const r = runCli([
      "offline-study",
      "plan",
      "--dataset",
      w,
      "--policy",
      "stub",
      "--out",
      join(w, "p.yaml"),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not a LeRobotDataset: 1 bare video file\(s\) \(episode_0.mp4\)/);
  });

  it("a tabletop recording: the default plan is refused before registering when too small, and the dry run walks a feasible one", () => {
    const w = tempDir();
    const data = join(w, "demos");
    const rec = runCli(
      ["record", "--tasks", "kitchen_red_block,pantry_red_block", "--scenes", "0:20"].concat([
        "--episodes",
        "6",
        "--out",
        data,
      ]),
      { timeoutMs: 600_000 },
    );
    expect(rec.code, rec.stderr).toBe(0);
    // Six episodes at the default stride give 76 calibration frames; the envelope over 7
    // dimensions needs 279: refused now, not after registering an immutable plan.
    const small = runCli(["offline-study", "plan", "--dataset", data, "--out", join(w, "p0.yaml")]);
    expect(small.code).toBe(2);
    expect(small.stderr).toMatch(/the envelope needs at least 279 calibration frames/);
    // Every frame, and a success bar 3 scored episodes can reach: the default plan otherwise.
    const plan = join(w, "plan.yaml");
    const p = runCli(
      ["offline-study", "plan", "--dataset", data, "--stride", "1", "--min-success", "0.4"].concat([
        "--out",
        plan,
      ]),
    );
    expect(p.code, p.stderr).toBe(0);
    const dry = runCli(
      ["offline-study", "run", "--plan", plan, "--out", join(w, "dry"), "--dry-run"],
      { timeoutMs: 600_000 },
    );
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain("dry run: rates withheld");
    const result = JSON.parse(readFileSync(join(w, "dry", "offline-study.json"), "utf8"));
    expect(result.dry_run).toBe(true);
    expect(result.competence.decided_by).toBe("closed-loop");
  }, 900_000);
});
