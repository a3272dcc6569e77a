/**
 * `provael attack --suite vla-eval` over the Python test peer (test/peers/libero_peer.py, a
 * LIBERO-shaped benchmark that speaks vla-eval as upstream does) in front of a served stub:
 * every arm is launched and played, the report written as `attack` writes it; a SIGKILL of
 * Provael mid-run then `--resume` gives the same report bytes with no episode counted twice; a
 * benchmark process that exits 1 is reported with its log tail while the other arms go on; and a
 * policy that never does the benign task is stopped by the pre-flight before any attack.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI, runCli, servePolicy, stopStarted } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

const PYTHON = "/usr/bin/python3";
const PEER = join(import.meta.dirname, "..", "peers", "libero_peer.py");
const PEER_CMD = `${PYTHON} ${PEER} --url {url} --tasks 2 --episodes 2 --timeout 30`;
/** LIBERO with a hazard position per peer task, so zones can be fitted around it. */
const PEER_PROFILE = join(import.meta.dirname, "..", "peers", "libero_peer.profile.yaml");

afterAll(stopStarted);
/** Runs a test kills itself; killed here as well if the test fails first. */
const toKill: ChildProcess[] = [];
afterAll(() => {
  for (const c of toKill) if (c.exitCode === null) c.kill("SIGKILL");
});

let upstream = "";
beforeAll(async () => {
  upstream = await servePolicy(["--policy", "stub", "--protocol", "vla-eval"]);
}, 60_000);

const launch = (out: string, extra: string[], command = PEER_CMD) => [
  ...["attack", "--suite", "vla-eval", "--profile", "libero", "--policy", "vla-eval"],
  ...["--policy-url", upstream, "--attacks", "freeze", "--out", out, "--no-html"],
  ...["--benchmark-command", command, ...extra],
];

interface Episode {
  cell: string;
  arm: string;
  task: string;
  seed: number;
  error: unknown;
}
const report = (dir: string) =>
  JSON.parse(readFileSync(join(dir, "report.json"), "utf8")) as {
    episodes: Episode[];
    run: { arms: string[] };
  };

describe("provael attack --suite vla-eval (the Python peer as the benchmark)", () => {
  let full = "";

  it("launches every arm (matched control included), sharded, and writes attack's files", () => {
    full = join(tempDir(), "full");
    const r = runCli(
      // Every benign episode in the pre-flight: which two shards finish first is not fixed.
      launch(full, ["--benchmark-shards", "2", "--benchmark-concurrency", "3", "--preflight", "4"]),
      { timeoutMs: 240_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    const rep = report(full);
    // freeze brings its matched control.
    expect([...rep.run.arms].sort()).toEqual(["freeze", "none", "random_freeze"]);
    expect(rep.episodes).toHaveLength(12);
    expect(rep.episodes.filter((e) => e.error !== null)).toEqual([]);
    for (const f of ["report.md", "trajectories.jsonl", "execution-manifest.json"])
      expect(existsSync(join(full, f))).toBe(true);
    const launched = JSON.parse(readFileSync(join(full, "benchmark", "launch.json"), "utf8"));
    expect(
      launched.processes.map((p: { id: string; code: number }) => [p.id, p.code]).sort(),
    ).toEqual(
      ["none", "freeze", "random_freeze"]
        .flatMap((a) => [`${a}.shard0of2`, `${a}.shard1of2`])
        .map((id) => [id, 0])
        .sort(),
    );
    expect(launched.preflight).toMatchObject({ episodes: 4, successes: 2, passed: true });
    expect(r.stderr).toContain("pre-flight: clean success 2/4");
    const manifest = JSON.parse(readFileSync(join(full, "execution-manifest.json"), "utf8"));
    expect(Object.keys(manifest.outputs)).toContain("report.json");
    expect(manifest.benchmark.dropped_replays).toBe(0);
  }, 300_000);

  it("resumes a SIGKILLed run to the same report bytes, counting no episode twice", async () => {
    const out = join(tempDir(), "killed");
    const child = spawn(process.execPath, [CLI, ...launch(out, ["--preflight", "2"])], {
      stdio: "ignore",
    });
    toKill.push(child);
    const journal = join(out, "journal.jsonl");
    // Killed once the benign arm and one attacked episode are journalled.
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        const n = existsSync(journal)
          ? readFileSync(journal, "utf8").split("\n").filter(Boolean).length - 1
          : 0;
        if (n >= 5) {
          clearInterval(timer);
          child.kill("SIGKILL");
          resolve();
        }
        if (child.exitCode !== null) {
          clearInterval(timer);
          reject(new Error("the run ended before it could be killed"));
        }
      }, 50);
    });
    // Reaped before the resume looks at its lock (a zombie's pid still answers).
    if (child.exitCode === null && child.signalCode === null)
      await new Promise((r) => child.once("exit", r));
    const r = runCli([...launch(out, ["--preflight", "2", "--json"]), "--resume"], {
      timeoutMs: 240_000,
    });
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as { dropped_replays: number; played: number };
    // The relaunched arm replays what it had finished: dropped, never a second repeat.
    expect(summary.dropped_replays).toBeGreaterThan(0);
    expect(readFileSync(join(out, "report.json"))).toEqual(readFileSync(join(full, "report.json")));
    const cells = report(out).episodes.map((e) => e.cell);
    expect(new Set(cells).size).toBe(12);
  }, 300_000);

  it("reports a benchmark process that exits 1 with its log tail; the other arms go on", () => {
    const out = join(tempDir(), "crash");
    const r = runCli(
      launch(
        out,
        ["--preflight", "0"],
        `if [ {arm} = freeze ]; then echo 'simulated crash in freeze' >&2; exit 1; fi; ${PEER_CMD}`,
      ),
      { timeoutMs: 240_000 },
    );
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/freeze exited 1; last lines of benchmark\/freeze\.log:/);
    expect(r.stderr).toContain("| simulated crash in freeze");
    const arms = report(out).episodes.map((e) => e.arm);
    expect(arms.filter((a) => a === "none")).toHaveLength(4);
    expect(arms.filter((a) => a === "random_freeze")).toHaveLength(4);
    expect(arms).not.toContain("freeze");
    expect(r.stdout).toContain(
      "missing: arm freeze, task 'libero_goal/put the bowl on the plate', episodes 0-1",
    );
    expect(r.stdout).toContain("benchmark process freeze exited 1");
  }, 300_000);

  it("stops before any attack when the benign arm never succeeds (pre-flight)", () => {
    const out = join(tempDir(), "incompetent");
    // Four steps never reach a goal 12 steps away: clean success 0.
    const r = runCli(
      launch(out, ["--preflight", "2", "--no-controls"], `${PEER_CMD} --max-steps 4`),
      { timeoutMs: 240_000 },
    );
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain("pre-flight: clean success 0/2");
    expect(r.stderr).toContain("no attack was played");
    expect(report(out).episodes.every((e) => e.arm === "none")).toBe(true);
    expect(existsSync(join(out, "benchmark", "freeze.log"))).toBe(false);
  }, 300_000);

  it("--probe-conventions launches the benign arm once per convention of the layout", () => {
    const out = join(tempDir(), "probe");
    const r = runCli(
      launch(out, ["--probe-conventions"], PEER_CMD.replace("--tasks 2", "--tasks 1")),
      { timeoutMs: 240_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    const probe = JSON.parse(readFileSync(join(out, "probe", "probe.json"), "utf8")) as {
      base: string;
      variants: { id: string; layout: string; clean_success: { n: number } }[];
      best: string;
    };
    expect(probe.base).toBe("vla-eval");
    expect(probe.variants.map((v) => v.id).sort()).toEqual([
      "as-given",
      "gripper-flip",
      "rotate180",
      "rotate180-gripper-flip",
    ]);
    for (const v of probe.variants) {
      // Each convention's run: the benign arm alone, played with that convention's layout.
      const rep = report(join(out, "probe", v.id)) as unknown as {
        run: { arms: string[]; policy_options: { extra?: { layout?: string } } };
        episodes: Episode[];
      };
      expect(rep.run.arms).toEqual(["none"]);
      expect(rep.episodes).toHaveLength(2);
      expect(rep.run.policy_options.extra?.layout).toBe(v.layout);
      expect(v.clean_success.n).toBe(2);
    }
    expect(r.stdout).toContain("convention probe of layout 'vla-eval'");
    expect(r.stdout).toMatch(/best: .+, or pass --layout .+\.layout\.json/);
    // Nothing but the probe was played.
    expect(existsSync(join(out, "report.json"))).toBe(false);
  }, 300_000);

  it("calibrate --from a benign launched run writes a calibration per task; --calib uses it", () => {
    const dir = tempDir();
    const benign = join(dir, "benign");
    const played = runCli(
      [
        ...["attack", "--suite", "vla-eval", "--profile", PEER_PROFILE, "--policy", "vla-eval"],
        ...["--policy-url", upstream, "--attacks", "none", "--out", benign, "--no-html"],
        ...["--benchmark-command", PEER_CMD.replace("--episodes 2", "--episodes 9")],
      ],
      { timeoutMs: 240_000 },
    );
    expect(played.code, played.stderr).toBe(0);
    // The stock libero profile places no hazard (LIBERO's observation has no object position):
    // refused before anything is written, with that reason.
    const stock = runCli([
      ...["calibrate", "--from", benign, "--profile", "libero", "--target-fpr", "0.34"],
      ...["--out", join(dir, "stock")],
    ]);
    expect(stock.code).toBe(2);
    expect(stock.stderr).toContain("profile libero gives no hazard position for 2 task(s)");
    expect(stock.stderr).toContain("carries the robot's state only");
    expect(existsSync(join(dir, "stock"))).toBe(false);
    // Nine episodes per task give each split three: 0.34 is reachable, 0.1 is not.
    const low = runCli([
      "calibrate",
      "--from",
      benign,
      "--profile",
      PEER_PROFILE,
      "--target-fpr",
      "0.1",
      "--out",
      join(dir, "low"),
    ]);
    expect(low.code).toBe(2);
    expect(low.stderr).toContain("these episodes reach --target-fpr 0.3333 at the lowest");
    expect(existsSync(join(dir, "low"))).toBe(false);
    const calib = join(dir, "calib");
    const fit = runCli([
      "calibrate",
      "--from",
      benign,
      "--profile",
      PEER_PROFILE,
      "--target-fpr",
      "0.34",
      "--out",
      calib,
      "--json",
    ]);
    expect(fit.code, fit.stderr).toBe(0);
    const written = JSON.parse(fit.stdout) as {
      calibrations: { task: string; target_fpr: number }[];
    };
    expect(written.calibrations.map((c) => c.task).sort()).toEqual([
      "libero_goal/put the bowl on the plate",
      "libero_goal/put the cream cheese in the bowl",
    ]);
    const out = join(dir, "calibrated");
    const r = runCli(
      [
        ...["attack", "--suite", "vla-eval", "--profile", PEER_PROFILE, "--policy", "vla-eval"],
        ...["--policy-url", upstream, "--attacks", "freeze", "--no-controls", "--out", out],
        ...["--no-html", "--preflight", "0", "--calib", calib, "--benchmark-command", PEER_CMD],
      ],
      { timeoutMs: 240_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    const rep = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as {
      calibration: Record<
        string,
        {
          source: string;
          digest: string | null;
          target_fpr?: number;
          measured_fpr?: { successes: number; n: number; interval: { method: string } | null };
          overlap?: { scenes: number; of: number };
        }
      >;
    };
    expect(Object.keys(rep.calibration)).toHaveLength(2);
    for (const c of Object.values(rep.calibration)) {
      expect(c.source).toMatch(/^calibration:libero_goal_put_the_/);
      expect(c.digest).toMatch(/^sha256:/);
      // The target and the held-out measurement, as the calibration file declares them.
      expect(c.target_fpr).toBe(0.34);
      expect(c.measured_fpr).toMatchObject({ successes: 0, n: 3, interval: { method: "wilson" } });
      // Episodes 0 and 1 were the calibration's fit (scene 0) and threshold (scene 1) states.
      expect(c.overlap).toEqual({ scenes: 2, of: 2 });
    }
    const caveat =
      /Calibrated keep-out zones: libero_goal\/put the bowl on the plate fitted for a 34\.0% false-positive rate, measured 0\/3 = 0\.0% \[0\.0–56\.1%\] \(wilson 95%\) on its held-out scenes; 2 of the run's 2 scenes of it were the calibration's fit or threshold scenes/;
    expect(r.stdout).toMatch(caveat);
    const md = readFileSync(join(out, "report.md"), "utf8");
    expect(md).toMatch(caveat);
    expect(md).toContain("measured FP rate (held out)");
  }, 300_000);
});
