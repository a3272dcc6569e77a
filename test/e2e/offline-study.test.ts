import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { sharedRun } from "../support/shared-run.js";
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

  /**
   * A small tabletop recording, made once per test run: two tasks with their own instructions,
   * scenes 0-3 each (held out from tiny-vla's training). Within each task the split puts scenes 0
   * and 2 in the calibration part and 1 and 3 in the scored part: four scored episodes, the
   * fewest at which 4/4 closed-loop success can clear the default bar (Wilson lower bound 0.51).
   */
  const tabletop = () => {
    const rec = sharedRun(
      ["record", "--tasks", "kitchen_green_box,kitchen_blue_ball", "--scenes", "0:4"].concat([
        "--episodes",
        "8",
      ]),
      { timeoutMs: 600_000 },
    );
    expect(rec.code, rec.stderr).toBe(0);
    return rec.dir;
  };

  it("a tabletop recording: the default plan registers and its dry run walks it, rates withheld; infeasible plans are refused before registering", () => {
    const data = tabletop();
    const w = tempDir();
    const plan = join(w, "plan.yaml");
    const p = runCli(["offline-study", "plan", "--dataset", data, "--out", plan]);
    expect(p.code, p.stderr).toBe(0);
    // Every 5th frame of eight episodes is too few for the envelope over all 7 dimensions: the
    // default stride is lowered to the largest that gives enough, and the output says so.
    expect(p.stdout).toMatch(/^stride 1: the default 5 gives too few calibration frames/m);
    const dry = runCli(
      ["offline-study", "run", "--plan", plan, "--out", join(w, "dry"), "--dry-run"],
      { timeoutMs: 600_000 },
    );
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain("dry run: rates withheld");
    expect(dry.stdout).toContain(
      "competence: withheld (dry run); decided by closed-loop clean success on the scored episodes' scenes in 'tabletop': 4 episode(s), not played in a dry run",
    );
    const result = JSON.parse(readFileSync(join(w, "dry", "offline-study.json"), "utf8"));
    expect(result.dry_run).toBe(true);
    expect(result.measurement.dims).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(result.policy).toEqual({ id: "tiny-vla", digest: null, asked: false });
    expect(result.competence.decided_by).toBe("closed-loop");
    expect(result.competence.closed_loop.played).toBe(false);
    expect(result.competence.closed_loop.planned).toHaveLength(4);
    expect(JSON.stringify(result)).not.toMatch(/"successes"|"median"/);
    // Plans that cannot give a result are refused, and nothing is registered.
    const sparse = runCli(
      ["offline-study", "plan", "--dataset", data, "--stride", "50"].concat([
        "--out",
        join(w, "sparse.yaml"),
      ]),
    );
    expect(sparse.code).toBe(2);
    expect(sparse.stderr).toMatch(/the envelope needs at least 279 calibration frames/);
    const two = runCli(
      ["offline-study", "plan", "--dataset", data, "--episodes", "0,1,2,3"].concat([
        "--dims",
        "0",
        "--out",
        join(w, "two.yaml"),
      ]),
    );
    expect(two.code).toBe(2);
    expect(two.stderr).toMatch(
      /competence cannot be shown: even 2\/2 closed-loop clean success has a Wilson lower bound of 0.342/,
    );
    for (const f of ["sparse.yaml", "two.yaml"]) expect(existsSync(join(w, f))).toBe(false);
  }, 900_000);

  it("closed-loop success on the recording's suite decides competence, and the output names the rule", () => {
    const data = tabletop();
    const w = tempDir();
    const plan = join(w, "plan.yaml");
    // A small plan: five frames per episode on dx; the closed-loop control plays the four scored
    // episodes' scenes with tiny-vla.
    const p = runCli(
      ["offline-study", "plan", "--dataset", data, "--dims", "0", "--target-fpr", "0.2"].concat([
        "--max-frames",
        "5",
        "--out",
        plan,
      ]),
    );
    expect(p.code, p.stderr).toBe(0);
    const r = runCli(["offline-study", "run", "--plan", plan, "--out", join(w, "study")], {
      timeoutMs: 600_000,
    });
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(readFileSync(join(w, "study", "offline-study.json"), "utf8"));
    const c = result.competence;
    const cl = c.closed_loop;
    expect(c.decided_by).toBe("closed-loop");
    expect(cl.suite).toBe("tabletop");
    expect(cl.episodes.map((e: { task: string; scene: number }) => `${e.task}:${e.scene}`)).toEqual(
      ["kitchen_green_box:1", "kitchen_blue_ball:1", "kitchen_green_box:3", "kitchen_blue_ball:3"],
    );
    expect(cl.success.n).toBe(4);
    expect(cl.success.successes).toBe(
      cl.episodes.filter((e: { success: boolean }) => e.success).length,
    );
    expect(cl.success.interval.method).toBe("wilson");
    // The verdict follows the closed-loop bound alone; agreement is reported beside it.
    expect(c.competent).toBe(cl.success.interval.low >= 0.5);
    expect(c.agreement.all_dims.n).toBe(result.frames.scored);
    const figure = `${cl.success.successes}/4 = ${(cl.success.rate * 100).toFixed(1)}% [${(cl.success.interval.low * 100).toFixed(1)}%, ${(cl.success.interval.high * 100).toFixed(1)}%]`;
    const line = `competence: ${c.competent ? "competent" : "not shown competent"}, decided by closed-loop clean success on the scored episodes' scenes in 'tabletop': ${figure} (95% Wilson; the rule asks a lower bound of at least 0.5)`;
    expect(r.stdout).toContain(line);
    expect(c.summary).toBe(line.slice("competence: ".length));
    expect(readFileSync(join(w, "study", "offline-study.md"), "utf8")).toContain(
      `Competence: ${c.summary}.`,
    );
  }, 900_000);
});
