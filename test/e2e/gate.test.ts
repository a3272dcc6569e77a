/** Recipes, acceptance protocols, the regression gate and calibration, through the built CLI. */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
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
    expect(e.stderr).toMatch(/acceptance protocol .*bad\.yaml: criteria: Unrecognized key/);
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
    expect(stubRun(join(dir, "a")).code).toBe(0);
    expect(stubRun(join(dir, "b"), ["--horizon", "12"]).code).toBe(0);
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
  it("fits per-task zones, scores a run with them, and refuses what does not match", () => {
    const dir = tempDir();
    const calib = join(dir, "calib");
    const c = runCli([
      "calibrate",
      "--policy",
      "stub",
      "--suite",
      "stub",
      "--seeds",
      "220",
      "--target-fpr",
      "0.01",
      "--out",
      calib,
      "--json",
    ]);
    expect(c.code, c.stderr).toBe(0);
    const out = JSON.parse(c.stdout) as {
      calibrations: {
        task: string;
        holdout: { fpr: number; n: number };
        fit: { seeds: number[] };
        face: { axis: number };
      }[];
    };
    expect(out.calibrations).toHaveLength(3);
    for (const cal of out.calibrations) {
      expect(cal.holdout.fpr).toBeLessThanOrEqual(0.01);
      expect(cal.holdout.n).toBeGreaterThanOrEqual(100);
      expect(cal.face.axis).toBe(0);
    }
    const run = runCli([
      "attack",
      ...STUB,
      "--seeds",
      "5",
      "--calib",
      calib,
      "--require-calibrated",
      "--out",
      join(dir, "r"),
    ]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(readFileSync(join(dir, "r", "report.json"), "utf8"));
    expect(report.calibration.fetch_cup.source).toBe("calibration:fetch_cup.calibration.json");
    expect(report.calibration.fetch_cup.predicate).toBe("calibrated_keep_out");
    expect(report.calibration.fetch_cup.digest).toMatch(/^sha256:/);
    // Without calibration files, --require-calibrated refuses to run.
    const refused = runCli([
      "attack",
      ...STUB,
      "--seeds",
      "2",
      "--require-calibrated",
      "--out",
      join(dir, "x"),
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /no calibration for task\(s\) fetch_cup, wipe_plate, grab_sponge/,
    );
    const env = runCli(["attack", ...STUB, "--seeds", "2", "--out", join(dir, "y")], {
      env: { PROVAEL_REQUIRE_CALIBRATED: "1" },
    });
    expect(env.code).toBe(2);
    // Too few seeds is refused with what to do, and nothing is written as valid.
    const few = runCli([
      "calibrate",
      "--policy",
      "stub",
      "--suite",
      "stub",
      "--seeds",
      "20",
      "--out",
      join(dir, "few"),
    ]);
    expect(few.code).toBe(2);
    expect(few.stderr).toMatch(
      /cannot resolve a false-positive rate of 0\.01 \(need at least 100\)[\s\S]*hint: run at least 200 benign seeds/,
    );
    expect(existsSync(join(dir, "few", "fetch_cup.calibration.json"))).toBe(false);
  }, 120_000);
});
