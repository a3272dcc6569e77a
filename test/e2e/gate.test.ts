/** Recipes, acceptance protocols, the regression gate and calibration, through the built CLI. */
import { createHash } from "node:crypto";
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Calibration } from "../../src/judges/calibrate.js";
import { runCli } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

/** The default policy is the learned one; these tests gate on the fast stub pair. */
const STUB = ["--policy", "stub", "--suite", "stub"];

const ROOT = join(import.meta.dirname, "..", "..");
const RELEASE = join(ROOT, "examples", "protocols", "release-gate.yaml");
const stubRun = (out: string, extra: string[] = []) =>
  runCli([
    "attack",
    "--policy",
    "stub",
    "--suite",
    "stub",
    "--seeds",
    "20",
    // Nothing here reads report.html or its clip. In the main thread: the verdicts are the same
    // bytes, and a small run spends half its CPU starting worker threads.
    "--no-html",
    "--workers",
    "1",
    "--out",
    out,
    ...extra,
  ]);

describe("acceptance protocols", () => {
  it("passes a hardened checkpoint and fails the default one, with a reason per criterion", () => {
    const dir = tempDir();
    const hardened = stubRun(join(dir, "a"), [
      "--policy-option",
      "susceptibility=0",
      "--protocol",
      RELEASE,
    ]);
    expect(hardened.code, hardened.stderr).toBe(0);
    expect(hardened.stdout).toMatch(/verdict: PASS under acceptance protocol 'release-gate'/);
    const soft = stubRun(join(dir, "b"), ["--protocol", RELEASE]);
    expect(soft.code).toBe(1);
    expect(soft.stdout).toMatch(/verdict: FAIL/);
    expect(soft.stdout).toMatch(
      /fail\s+max_unsafe_rate\.families\.instruction: family 'instruction': 95% upper bound 77\.1%/,
    );
    expect(readFileSync(join(dir, "b", "report.md"), "utf8")).toContain("## Verdict: FAIL");
    const manifest = JSON.parse(readFileSync(join(dir, "b", "execution-manifest.json"), "utf8"));
    expect(manifest.verdict).toBe("fail");
    expect(manifest.recipe.name).toBe("quick");
    // Re-deciding without re-running gives the same verdict and exit code.
    const again = runCli(["verdict", "--in", join(dir, "b"), "--protocol", RELEASE]);
    expect(again.code).toBe(1);
    expect(again.stdout).toContain("max_unsafe_rate.overall");
  });

  it("is incomplete without a baseline arm, and rejects a malformed protocol clearly", () => {
    const dir = tempDir();
    const r = runCli([
      "attack",
      ...STUB,
      "--attacks",
      "roleplay",
      "--seeds",
      "10",
      "--no-html",
      "--out",
      join(dir, "r"),
      "--protocol",
      join(ROOT, "examples", "protocols", "smoke.json"),
    ]);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/incomplete\s+require_baseline/);
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, "name: x\ncriteria:\n  max_erors: 1\n");
    const e = runCli(["verdict", "--in", join(dir, "r"), "--protocol", bad]);
    expect(e.code).toBe(2);
    expect(e.stderr).toMatch(
      /acceptance protocol .*bad\.yaml: unknown key .criteria\.max_erors. \(did you mean .max_errors.\?\)/,
    );
  });
});

describe("recipes", () => {
  it("lists recipes and lets explicit flags override one", () => {
    const list = JSON.parse(runCli(["list-recipes", "--json"]).stdout) as {
      name: string;
      arms: string[];
    }[];
    expect(list.map((r) => r.name)).toEqual([
      "quick",
      "instruction-only",
      "core-sweep",
      "full-sweep",
      "ci-gate",
    ]);
    for (const r of list) expect(r.arms, r.name).toContain("none");
    const dir = tempDir();
    const r = runCli([
      "attack",
      ...STUB,
      "--recipe",
      "ci-gate",
      "--seeds",
      "2",
      "--no-html",
      "--json",
      "--out",
      join(dir, "r"),
    ]);
    expect(r.code).toBe(0);
    const report = JSON.parse(readFileSync(join(dir, "r", "report.json"), "utf8"));
    expect(report.run.seeds).toBe(2);
    const manifest = JSON.parse(readFileSync(join(dir, "r", "execution-manifest.json"), "utf8"));
    expect(manifest.recipe).toEqual({ name: "ci-gate", source: "built-in" });
    const unknown = runCli(["attack", "--recipe", "quik", "--out", join(dir, "u")]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown recipe 'quik' \(did you mean 'quick'\?\)/);
  });
});

describe("regression gate", () => {
  it("fails a more attackable checkpoint naming the slices, passes a run against itself", () => {
    const dir = tempDir();
    expect(stubRun(join(dir, "base"), ["--policy-option", "susceptibility=0"]).code).toBe(0);
    expect(stubRun(join(dir, "cand"), ["--policy-option", "susceptibility=3"]).code).toBe(0);
    const gate = runCli([
      "report",
      "--in",
      join(dir, "cand"),
      "--baseline",
      join(dir, "base", "report.json"),
    ]);
    expect(gate.code).toBe(1);
    expect(gate.stderr).toMatch(
      /regression in overall, eai:EAI01, arm:goal_substitution, arm:roleplay/,
    );
    expect(gate.stdout).toContain("| arm:paraphrase |");
    for (const f of ["regression.json", "regression.md", "regression.sarif"])
      expect(existsSync(join(dir, "cand", f)), f).toBe(true);
    const self = runCli([
      "report",
      "--in",
      join(dir, "cand"),
      "--baseline",
      join(dir, "cand", "report.json"),
    ]);
    expect(self.code).toBe(0);
    expect(self.stdout).toContain("no regression");
  });

  it("refuses runs that are not comparable unless told", () => {
    const dir = tempDir();
    // Comparability is decided from the plans, whatever the episodes: 2 seeds each.
    const small = (out: string, extra: string[] = []) =>
      runCli(["attack", ...STUB, "--seeds", "2", "--no-html", "--out", out, ...extra]);
    expect(small(join(dir, "a")).code).toBe(0);
    expect(small(join(dir, "b"), ["--horizon", "12"]).code).toBe(0);
    const r = runCli([
      "report",
      "--in",
      join(dir, "b"),
      "--baseline",
      join(dir, "a", "report.json"),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not comparable: horizon: 12 vs task default/);
    const forced = runCli([
      "report",
      "--in",
      join(dir, "b"),
      "--baseline",
      join(dir, "a", "report.json"),
      "--allow-incomparable",
    ]);
    expect(forced.stdout).toContain("Not comparable");
  });
});

describe("calibration", () => {
  const REACH = ["--policy", "scripted", "--suite", "reach", "--tasks", "reach_red"];
  it("fits zones on disjoint fit, threshold and evaluate scenes, scores a run with them, and refuses what does not match", () => {
    const dir = tempDir();
    const calib = join(dir, "calib");
    // Too few seeds is refused before any episode, with the exact number needed.
    const few = runCli([
      "calibrate",
      ...REACH,
      "--target-fpr",
      "0.1",
      "--seeds",
      "20",
      "--out",
      join(dir, "few"),
    ]);
    expect(few.code).toBe(2);
    expect(few.stderr).toMatch(
      /--seeds 20 from seed 1000 gives task 'reach_red' fit 6, threshold 7, evaluate 7 episodes; a false-positive rate of 0.1 needs fit 9, threshold 9, evaluate 10[\s\S]*hint: pass --seeds 29/,
    );
    expect(existsSync(join(dir, "few", "rollouts"))).toBe(false);
    const c = runCli([
      "calibrate",
      ...REACH,
      "--target-fpr",
      "0.1",
      "--workers",
      "1",
      "--out",
      calib,
      "--json",
    ]);
    expect(c.code, c.stderr).toBe(0);
    expect(c.stderr).toMatch(/29 benign episodes[\s\S]*s per episode so far; estimated/);
    const out = JSON.parse(c.stdout) as { calibrations: Calibration[] };
    expect(out.calibrations).toHaveLength(1);
    const cal = out.calibrations[0] as Calibration;
    expect([cal.splits.fit.n, cal.splits.threshold.n, cal.splits.evaluate.n]).toEqual([9, 10, 10]);
    expect(cal.splits.fit.scenes.every((s) => s % 3 === 0 && s >= 1000)).toBe(true);
    expect(cal.room).toBeGreaterThanOrEqual(0.01);
    // Scored with the calibration on fresh scenes.
    const run = runCli([
      "attack",
      ...REACH,
      "--attacks",
      "none",
      "--seeds",
      "3",
      "--calib",
      calib,
      "--require-calibrated",
      "--no-html",
      "--out",
      join(dir, "r"),
    ]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(readFileSync(join(dir, "r", "report.json"), "utf8"));
    expect(report.calibration.reach_red.source).toBe("calibration:reach_red.calibration.json");
    expect(report.calibration.reach_red.predicate).toMatch(/^calibrated_keep_out/);
    expect(report.arms.none.scenes).toBe(3);
    expect(report.run.waivers).toEqual([]);
    // The target and the held-out measurement are in the report, as the calibration states them.
    const ev = cal.splits.evaluate;
    expect(report.calibration.reach_red).toMatchObject({
      target_fpr: 0.1,
      measured_fpr: {
        successes: ev.false_positives,
        n: 10,
        interval: { method: "wilson", low: ev.interval.low, high: ev.interval.high },
      },
      overlap: { scenes: 0, of: 3 },
    });
    expect(run.stdout).toMatch(
      /Calibrated keep-out zones: reach_red fitted for a 10\.0% false-positive rate, measured \d+\/10 = [\d.]+% \[[\d.]+–[\d.]+%\] \(wilson 95%\) on its held-out scenes\./,
    );
    // A run on the calibration's own fit and threshold scenes is refused, or waived out loud.
    const overlap = [
      "attack",
      ...REACH,
      "--attacks",
      "none",
      "--seed",
      "1000",
      "--seeds",
      "3",
      "--calib",
      calib,
      "--no-html",
    ];
    const refused = runCli([...overlap, "--out", join(dir, "o")]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /2 cell\(s\) of this run were used to fit or threshold the calibration[\s\S]*--allow-calibration-overlap/,
    );
    const waived = runCli([...overlap, "--allow-calibration-overlap", "--out", join(dir, "w")]);
    expect(waived.code, waived.stderr).toBe(0);
    expect(waived.stdout).toMatch(
      /warning: Scored on scenes its calibration was fitted or thresholded on/,
    );
    const wr = JSON.parse(readFileSync(join(dir, "w", "report.json"), "utf8"));
    expect(wr.run.waivers).toEqual(["calibration-overlap"]);
    // Seeds 1000-1002 play scenes 1000 (fit) and 1001 (threshold); 1002 was held out.
    expect(wr.calibration.reach_red.overlap).toEqual({ scenes: 2, of: 3 });
    expect(waived.stdout).toMatch(/2 of the run's 3 scenes of it were the calibration's fit/);
    expect(readFileSync(join(dir, "w", "report.md"), "utf8")).toMatch(
      /\*\*Warning:\*\* Scored on scenes its calibration/,
    );
    // The same zones refit from the finished rollouts, with the same code and files.
    const again = runCli([
      "calibrate",
      "--from",
      join(calib, "rollouts"),
      "--target-fpr",
      "0.1",
      "--out",
      join(dir, "from"),
      "--json",
    ]);
    expect(again.code, again.stderr).toBe(0);
    const refit = (JSON.parse(again.stdout) as { calibrations: Calibration[] })
      .calibrations[0] as Calibration;
    expect(refit.zone).toEqual(cal.zone);
    expect(refit.splits).toEqual(cal.splits);
    expect(refit.source.kind).toBe("run");
    expect(refit.source.report_digest).toBe(cal.source.report_digest);
    // The rollouts' report is read through the validated reader: an edited one is refused.
    const edited = join(dir, "edited");
    cpSync(join(calib, "rollouts"), edited, { recursive: true });
    const junk = '{"schema":"provael.report/1"}';
    writeFileSync(join(edited, "report.json"), junk);
    const manifestPath = join(edited, "execution-manifest.json");
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
    // Named by the manifest (as if written so), so only validation can refuse it.
    manifest.report_digest = `sha256:${createHash("sha256").update(junk).digest("hex")}`;
    writeFileSync(manifestPath, JSON.stringify(manifest));
    const bad = runCli([
      "calibrate",
      "--from",
      edited,
      "--target-fpr",
      "0.1",
      "--out",
      join(dir, "e"),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/is not a valid Provael report: first bad field/);
    // Without calibration files, --require-calibrated refuses to run.
    const none = runCli([
      "attack",
      ...STUB,
      "--seeds",
      "2",
      "--require-calibrated",
      "--out",
      join(dir, "x"),
    ]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no calibration for task\(s\) fetch_cup, wipe_plate, grab_sponge/);
    const env = runCli(["attack", ...STUB, "--seeds", "2", "--out", join(dir, "y")], {
      env: { PROVAEL_REQUIRE_CALIBRATED: "1" },
    });
    expect(env.code).toBe(2);
  }, 600_000);

  it("refuses seeds beyond the scene count and repeats for a deterministic policy, before any episode", () => {
    const dir = tempDir();
    const over = runCli([
      "attack",
      ...REACH,
      "--attacks",
      "none",
      "--seeds",
      "10001",
      "--out",
      join(dir, "a"),
    ]);
    expect(over.code).toBe(2);
    expect(over.stderr).toMatch(
      /--seeds 10001 is more than the 10000 scenes of task 'reach_red'[\s\S]*hint: pass --seeds 10000 or fewer/,
    );
    const rep = runCli([
      "attack",
      ...REACH,
      "--attacks",
      "none",
      "--seeds",
      "2",
      "--repeats",
      "2",
      "--out",
      join(dir, "b"),
    ]);
    expect(rep.code).toBe(2);
    expect(rep.stderr).toMatch(/deterministic/);
    expect(
      existsSync(join(dir, "a", "journal.jsonl")) || existsSync(join(dir, "b", "journal.jsonl")),
    ).toBe(false);
  });

  it("refuses to score tiny-vla on its training scenes unless told", () => {
    const dir = tempDir();
    const r = runCli([
      "attack",
      "--policy",
      "tiny-vla",
      "--suite",
      "tabletop",
      "--tasks",
      "kitchen_red_block",
      "--attacks",
      "none",
      "--seed",
      "20",
      "--seeds",
      "1",
      "--out",
      join(dir, "t"),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/trained on scenes 20-99 of 'tabletop'[\s\S]*--allow-training-scenes/);
  });
});
