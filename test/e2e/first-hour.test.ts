/**
 * A new user's first hour with the built CLI, step by step: what the default run would play, an
 * impossible pairing refused before any episode, a named attack on every task, progress in a
 * pipe, Ctrl-C and --resume, an N/A arm's reason in every output, an arm that only errored, and
 * a key written inside a work tree. Physics runs are planned with --dry-run; played runs use the
 * stub pair, so the file takes seconds.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI, runCli } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

const read = (dir: string, f = "report.json") => readFileSync(join(dir, f), "utf8");

describe("a new user's first hour", () => {
  it("the no-flag default plans one instruction, visual and action attack with their controls", () => {
    const r = runCli(["attack", "--dry-run"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("tiny-vla on tabletop: 3 task(s)");
    expect(r.stdout).toContain("seeds 0–4;");
    for (const arm of [
      "none",
      "goal_substitution",
      "nonsense_text",
      "patch",
      "placebo_patch",
      "trajectory_hijack",
    ])
      expect(r.stdout).toMatch(new RegExp(`arms: .*\\b${arm}\\b`));
    // Help shows the defaults as they apply.
    const help = runCli(["attack", "--help"]);
    expect(help.stdout).toContain("On tabletop, when no --attacks and no --tasks are given");
    const recipes = runCli(["list-recipes"]);
    expect(recipes.stdout).toContain("on tabletop");
  }, 120_000);

  it("`--suite tabletop --attacks freeze` plans all 12 tasks at the recipe's seeds", () => {
    const r = runCli(["attack", "--suite", "tabletop", "--attacks", "freeze", "--dry-run"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("tiny-vla on tabletop: 12 task(s)");
    expect(r.stdout).toContain("seeds 0–9;");
  }, 120_000);

  it("refuses tiny-vla on the stub suite before any episode (exit 2, naming what is missing)", () => {
    const out = join(tempDir(), "run");
    const r = runCli(["attack", "--policy", "tiny-vla", "--suite", "stub", "--out", out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("tiny-vla cannot play stub");
    expect(r.stderr).toContain("'wrist'");
    expect(r.stderr).toContain("hint: tiny-vla was built for tabletop");
    expect(existsSync(join(out, "journal.jsonl"))).toBe(false);
    const dry = runCli(["attack", "--policy", "tiny-vla", "--suite", "stub", "--dry-run"]);
    expect(dry.code).toBe(2);
  }, 120_000);

  it("calibrate refuses an unknown task by name before playing, with the nearest task", () => {
    const out = join(tempDir(), "calib");
    const r = runCli([
      "calibrate",
      "--policy",
      "scripted",
      "--suite",
      "tabletop",
      "--tasks",
      "kitchen_red_blok",
      "--out",
      out,
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown task 'kitchen_red_blok' in suite 'tabletop'");
    expect(r.stderr).toContain("kitchen_red_block");
    expect(r.stderr).not.toContain("--seeds");
    expect(existsSync(join(out, "rollouts"))).toBe(false);
  }, 120_000);

  it("a piped run prints progress lines, the plan, and what to do next", () => {
    const out = join(tempDir(), "run");
    const r = runCli([
      "attack",
      "--policy",
      "stub",
      "--suite",
      "stub",
      "--attacks",
      "none,goal_substitution",
      "--seeds",
      "3",
      "--out",
      out,
    ]);
    expect(r.code, r.stderr).toBe(0);
    // goal_substitution brings its two matched controls: 3 tasks × 4 arms × 3 seeds.
    expect(r.stderr).toMatch(/progress: 0\/36 episodes \(0%\), — ep\/s, ETA —, 0 errors/);
    expect(r.stderr).toMatch(/progress: 36\/36 episodes \(100%\), [0-9.]+ ep\/s, ETA 0s, 0 errors/);
    expect(r.stderr).not.toContain("NF");
    expect(r.stderr.match(/progress: 36\/36 /g)).toHaveLength(1);
    expect(r.stdout).toContain("stub on stub: 3 task(s) × 4 arm(s) × 3 seed(s)");
    expect(r.stdout).toContain("arms: none, nonsense_text, declarative_text, goal_substitution");
    const closing = r.stdout.trimEnd().split("\n").slice(-4);
    expect(closing[0]).toBe("next:");
    expect(closing[1]).toContain(`open ${join(out, "report.html")}`);
    expect(closing[2]).toContain(`provael view ${out}`);
    // The stub suite gives no hazard position: a calibration could fit nothing, so none is named.
    expect(r.stdout).not.toContain("provael calibrate");
  }, 120_000);

  it("Ctrl-C saves what finished, prints how to continue, and --resume gives identical bytes", async () => {
    const dir = tempDir();
    const args = [
      "attack",
      "--policy",
      "stub",
      "--suite",
      "stub",
      "--attacks",
      "none,instruction",
      "--seeds",
      "10",
      "--no-html",
    ];
    const whole = runCli([...args, "--out", join(dir, "whole")]);
    expect(whole.code, whole.stderr).toBe(0);
    const out = join(dir, "stopped");
    const { code, stderr } = await stopAfter([...args, "--out", out], out, 30, "SIGINT");
    expect(code).toBe(130);
    // 10 seeds × 3 tasks × 9 arms; the stop comes a few episodes in.
    const m = /interrupted: (\d+) of 270 episodes saved in (\S+); continue with: (.*)\n/.exec(
      stderr,
    );
    expect(m, stderr).not.toBeNull();
    const [, saved, where, hint] = m as unknown as [string, string, string, string];
    expect(where).toBe(out);
    expect(Number(saved)).toBeGreaterThan(0);
    expect(Number(saved)).toBeLessThan(270);
    expect(hint).toBe(`provael ${args.join(" ")} --out ${out} --resume`);
    expect(existsSync(join(out, "report.json"))).toBe(false);
    const resumed = runCli(hint.split(" ").slice(1));
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(read(out)).toBe(read(join(dir, "whole")));
    expect(read(out, "trajectories.jsonl")).toBe(read(join(dir, "whole"), "trajectories.jsonl"));
  }, 300_000);

  it("SIGTERM stops the default run in one worker between episodes (it used to be ignored until the end)", async () => {
    const out = join(tempDir(), "term");
    // The default run (tiny-vla on tabletop, its attacks and controls), in this process's thread;
    // the header and one episode journalled: the run is under way.
    const { code, stderr } = await stopAfter(
      ["attack", "--workers", "1", "--no-html", "--out", out],
      out,
      2,
      "SIGTERM",
    );
    expect(code, stderr).toBe(130);
    expect(stderr).toContain("stopping: finishing the episodes in flight");
    const m = /interrupted: (\d+) of 120 episodes saved/.exec(stderr);
    expect(m, stderr).not.toBeNull();
    expect(Number((m as RegExpExecArray)[1])).toBeLessThan(120);
  }, 180_000);

  it("an N/A arm carries its reason in report.json, the table, report.md and report.html", () => {
    const out = join(tempDir(), "run");
    const r = runCli([
      "attack",
      "--policy",
      "stub",
      "--suite",
      "stub",
      "--attacks",
      "none,patch",
      "--no-controls",
      "--seeds",
      "2",
      "--out",
      out,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const reason = "needs a policy that reads camera images (cameras); stub does not";
    const report = JSON.parse(read(out)) as {
      arms: Record<string, { not_applicable_reason: string | null }>;
    };
    expect(report.arms.patch?.not_applicable_reason).toBe(reason);
    expect(report.arms.none?.not_applicable_reason).toBeNull();
    expect(r.stdout).toContain(reason);
    expect(read(out, "report.md")).toContain(reason);
    expect(read(out, "report.html")).toContain(reason);
  }, 120_000);

  it("a treatment without a matched control is warned about in the headline", () => {
    const out = join(tempDir(), "run");
    const r = runCli([
      "attack",
      "--policy",
      "stub",
      "--suite",
      "stub",
      "--attacks",
      "none,goal_substitution",
      "--no-controls",
      "--seeds",
      "2",
      "--no-html",
      "--out",
      out,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("arms: none, goal_substitution\n");
    expect(r.stdout).toContain("No matched control ran for goal_substitution");
    expect(read(out, "report.md")).toContain("No matched control ran for goal_substitution");
  }, 120_000);

  it("a run in which every episode of an arm errored exits 4", () => {
    const out = join(tempDir(), "run");
    const r = runCli([
      "attack",
      "--policy",
      "stub",
      "--suite",
      "stub",
      "--attacks",
      "none",
      "--seeds",
      "2",
      "--policy-option",
      "broken=true",
      "--no-html",
      "--out",
      out,
    ]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain("every episode of none errored");
  }, 120_000);

  it("a leaderboard over two shards, their merge and calibration rollouts counts each cell once", () => {
    const root = tempDir();
    const args = [
      "attack",
      "--policy",
      "stub",
      "--suite",
      "stub",
      "--attacks",
      "none,goal_substitution",
    ];
    const plan = [...args, "--seeds", "3", "--no-html"];
    for (const k of ["0", "1"]) {
      const r = runCli([...plan, "--shard", `${k}/2`, "--out", join(root, "runs", `shard-${k}`)]);
      expect(r.code, r.stderr).toBe(0);
      expect(read(join(root, "runs", `shard-${k}`), "report.md")).toContain(`**Shard ${k}/2:**`);
    }
    const merged = runCli([
      "merge",
      "--in",
      join(root, "runs", "shard-0"),
      join(root, "runs", "shard-1"),
      "--out",
      join(root, "runs", "merged"),
    ]);
    expect(merged.code, merged.stderr).toBe(0);
    expect(existsSync(join(root, "runs", "merged", "report.html"))).toBe(true);
    // Benign rollouts of `provael calibrate` sit in the same folder (a reach task: the stub
    // suite gives no hazard position, so calibrate refuses it before playing).
    const cal = runCli([
      "calibrate",
      "--policy",
      "scripted",
      "--suite",
      "reach",
      "--tasks",
      "reach_red",
      "--target-fpr",
      "0.2",
      "--out",
      join(root, "runs", "calib"),
    ]);
    expect(existsSync(join(root, "runs", "calib", "rollouts", "report.json")), cal.stderr).toBe(
      true,
    );
    const board = runCli([
      "leaderboard",
      "build",
      "--runs",
      join(root, "runs"),
      "--out",
      join(root, "board"),
    ]);
    expect(board.code, board.stderr).toBe(0);
    const lb = JSON.parse(read(join(root, "board"), "leaderboard.json")) as {
      rows: {
        family: string;
        role: string;
        unsafe: { n: number };
        baseline: { n: number };
        reports: string[];
      }[];
      inputs: { excluded: string | null }[];
    };
    const instruction = lb.rows.find((r) => r.family === "instruction");
    // 3 tasks × 3 seeds: 9 cells per arm, however many reports hold them.
    expect(instruction?.unsafe.n).toBe(9);
    expect(instruction?.baseline.n).toBe(9);
    expect(instruction?.reports).toHaveLength(3);
    expect(lb.inputs.filter((i) => i.excluded !== null)).toHaveLength(1);
  }, 240_000);

  it("keygen inside a git work tree warns that `git add .` would pick the key up", () => {
    const repo = tempDir();
    mkdirSync(join(repo, ".git"));
    const inside = runCli(["keygen", "--out", join(repo, "keys")]);
    expect(inside.code).toBe(0);
    expect(inside.stderr).toContain("inside the git work tree");
    const outside = runCli(["keygen", "--out", join(tempDir(), "keys")]);
    expect(outside.code).toBe(0);
    expect(outside.stderr).toBe("");
    expect(readdirSync(join(repo, "keys")).sort()).toEqual(["private.pem", "public.pem"]);
  }, 120_000);
});

/**
 * Runs the CLI with `args`, sends `signal` once the journal in `out` has more than `lines`
 * lines, and waits for the exit: its code and everything it wrote to stderr.
 */
async function stopAfter(
  args: string[],
  out: string,
  lines: number,
  signal: NodeJS.Signals,
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += String(d);
  });
  const journal = join(out, "journal.jsonl");
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      const n = existsSync(journal) ? readFileSync(journal, "utf8").split("\n").length : 0;
      if (n > lines) {
        clearInterval(timer);
        child.kill(signal);
        resolve();
      }
    }, 5);
    child.on("exit", () => {
      clearInterval(timer);
      reject(new Error(`the run ended before it could be stopped: ${stderr}`));
    });
  });
  const code = await new Promise<number | null>((r) => child.on("exit", (c) => r(c)));
  return { code, stderr };
}
