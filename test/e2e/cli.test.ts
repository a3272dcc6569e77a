import { spawn } from "node:child_process";
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI, runCli } from "../support/cli.js";
import { writeTabletopDemos } from "../support/tabletop-demos.js";
import { tempDir } from "../support/tmp.js";

// No report.html (nor its showcase clip, about half the CPU of a small run): nothing here reads
// them; durability, evidence, first-hour and view test the default run's pages and clip.
const QUICK = [
  "attack",
  "--policy",
  "stub",
  "--suite",
  "stub",
  "--attacks",
  "none,control,instruction",
  "--seeds",
  "10",
  "--no-html",
];
/** In the main thread, for small runs that do not test the worker pool: half their CPU. */
const ONE_WORKER = ["--workers", "1"];
const read = (dir: string, f = "report.json") => readFileSync(join(dir, f), "utf8");

describe("provael attack (built CLI)", () => {
  it("prints the arms table and gives identical bytes across processes and concurrency", () => {
    const a = tempDir();
    const b = tempDir();
    const r1 = runCli([...QUICK, "--concurrency", "1", "--out", join(a, "run")]);
    const r2 = runCli([...QUICK, "--concurrency", "8", "--out", join(b, "run")]);
    expect(r1.code).toBe(0);
    expect(r2.code).toBe(0);
    expect(r1.stdout).toContain("goal_substitution");
    expect(r1.stdout).toContain("benign floor");
    // Off a terminal: plain progress lines, nothing else.
    expect(r1.stderr).toMatch(/^(progress: \d+\/\d+ episodes .*\n)+$/);
    expect(read(join(a, "run"))).toBe(read(join(b, "run")));
    for (const f of [
      "report.md",
      "trajectories.jsonl",
      "execution-manifest.json",
      "journal.jsonl",
    ]) {
      expect(existsSync(join(a, "run", f)), f).toBe(true);
    }
  });

  it("finishes a SIGKILLed run with --resume to identical bytes", async () => {
    const dir = tempDir();
    // About 27 journal lines a seed: the kill at line 200 comes a fifth of the way through.
    const big = [
      "attack",
      "--policy",
      "stub",
      "--suite",
      "stub",
      "--attacks",
      "none,control,instruction",
      "--seeds",
      "40",
      "--no-html",
    ];
    const whole = runCli([...big, "--out", join(dir, "whole")]);
    expect(whole.code).toBe(0);
    const out = join(dir, "killed");
    const child = spawn(process.execPath, [CLI, ...big, "--out", out], { stdio: "ignore" });
    const journal = join(out, "journal.jsonl");
    await new Promise<void>((resolve, reject) => {
      const started = Date.now();
      const timer = setInterval(() => {
        const lines = existsSync(journal) ? readFileSync(journal, "utf8").split("\n").length : 0;
        if (lines > 200) {
          clearInterval(timer);
          child.kill("SIGKILL");
          resolve();
        } else if (Date.now() - started > 60_000) {
          clearInterval(timer);
          reject(new Error("journal never grew"));
        }
      }, 5);
    });
    await new Promise((r) => child.on("exit", r));
    expect(existsSync(join(out, "report.json"))).toBe(false);
    // Simulate the torn write a crash can leave behind.
    appendFileSync(journal, '{"type":"episode","record":{"cell":"c');
    const refused = runCli([...big, "--out", out]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("partial run");
    const resumed = runCli([...big, "--out", out, "--resume"]);
    expect(resumed.code).toBe(0);
    expect(read(out)).toBe(read(join(dir, "whole")));
    expect(read(out, "trajectories.jsonl")).toBe(read(join(dir, "whole"), "trajectories.jsonl"));
    const again = runCli([...big, "--out", out, "--resume"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("already complete");
  }, 180_000);

  it("prints a JSON summary with --json", () => {
    const dir = tempDir();
    const r = runCli([
      ...QUICK,
      "--seeds",
      "2",
      ...ONE_WORKER,
      "--json",
      "--out",
      join(dir, "run"),
    ]);
    expect(r.code).toBe(0);
    const parsed = JSON.parse(r.stdout) as {
      summary: { preliminary: boolean };
      report_digest: string;
    };
    expect(parsed.summary.preliminary).toBe(true);
    expect(parsed.report_digest).toMatch(/^sha256:/);
  });
});

describe("provael attack --attack-param", () => {
  it("sets an attack's budget for the run and records it in the plan", () => {
    const dir = tempDir();
    const args = [
      ...QUICK.slice(0, 5),
      "--attacks",
      "none,optimized_instruction",
      "--seeds",
      "2",
      "--no-html",
    ];
    const r = runCli([
      ...args,
      "--attack-param",
      "optimized_instruction.budget=4",
      "--out",
      join(dir, "a"),
    ]);
    expect(r.code).toBe(0);
    const report = JSON.parse(read(join(dir, "a"))) as {
      episodes: { arm: string; budget: { limit: number | null; used: number } | null }[];
    };
    const searched = report.episodes.filter((e) => e.arm === "optimized_instruction");
    expect(searched.length).toBeGreaterThan(0);
    for (const e of searched) {
      expect(e.budget?.limit).toBe(4);
      expect(e.budget?.used).toBeLessThanOrEqual(4);
    }
    const header = JSON.parse(read(join(dir, "a"), "journal.jsonl").split("\n")[0] as string) as {
      plan: { attack_params: unknown };
    };
    expect(header.plan.attack_params).toEqual({ optimized_instruction: { budget: 4 } });
    // Resuming with other parameters is another plan: refused, nothing overwritten.
    const again = runCli([
      ...args,
      "--attack-param",
      "optimized_instruction.budget=8",
      "--out",
      join(dir, "a"),
      "--resume",
    ]);
    expect(again.code).not.toBe(0);
  });
});

describe("bad input", () => {
  const cases: [string, string[], RegExp][] = [
    [
      "unknown policy",
      ["attack", "--policy", "stubb"],
      /unknown policy 'stubb' \(did you mean 'stub'\?\)[\s\S]*provael list-policies/,
    ],
    ["unknown suite", ["attack", "--suite", "stb"], /unknown suite 'stb'[\s\S]*list-suites/],
    [
      "unknown attack",
      ["attack", "--attacks", "none,rolepay"],
      /unknown attack or family 'rolepay' \(did you mean 'roleplay'/,
    ],
    [
      "unknown task",
      ["attack", "--suite", "stub", "--tasks", "fetch_cp"],
      /unknown task 'fetch_cp' in suite 'stub' \(did you mean 'fetch_cup'/,
    ],
    ["zero seeds", ["attack", "--seeds", "0"], /--seeds must be an integer ≥ 1, got '0'/],
    ["negative horizon", ["attack", "--horizon", "-3"], /--horizon must be an integer ≥ 1/],
    ["zero concurrency", ["attack", "--concurrency", "0"], /--concurrency must be an integer ≥ 1/],
    ["empty attack list", ["attack", "--attacks", ","], /attack list is empty/],
    ["bad termination", ["attack", "--termination", "never"], /--termination must be one of/],
    [
      "attack param without an arm",
      ["attack", "--policy", "stub", "--suite", "stub", "--attack-param", "epsilon=1"],
      /--attack-param needs arm.key=value, got 'epsilon=1'/,
    ],
    [
      "attack param for an arm not in the run",
      [...QUICK, "--attack-param", "gradient_patch.epsilon=32/255"],
      /--attack-param names 'gradient_patch', which is not an arm of this run/,
    ],
    [
      "attack param out of range",
      [
        ...QUICK.slice(0, 5),
        "--attacks",
        "none,gradient_patch",
        "--attack-param",
        "gradient_patch.epsilon=2",
      ],
      /--attack-param for 'gradient_patch' is not valid: epsilon:/,
    ],
    [
      "attack param the attack does not take",
      [
        ...QUICK.slice(0, 5),
        "--attacks",
        "none,optimized_instruction",
        "--attack-param",
        "optimized_instruction.budgt=4",
      ],
      /--attack-param for 'optimized_instruction' is not valid: .*budgt/,
    ],
    [
      // The weights' path has a flag of its own: as an option it would play the shipped weights.
      "policy option the policy does not read",
      ["attack", "--policy", "tiny-vla", "--policy-option", "path=/tmp/weights"],
      /policy 'tiny-vla' has no option 'path'; it reads 'replan'[\s\S]*--policy-path DIR/,
    ],
    [
      "misspelt policy option",
      [...QUICK.slice(0, 5), "--policy-option", "susceptibilty=0.5"],
      /policy 'stub' has no option 'susceptibilty'[\s\S]*did you mean --policy-option susceptibility=/,
    ],
  ];
  for (const [name, args, pattern] of cases) {
    it(`${name}: exit 2 with a clear message and no stack trace`, () => {
      const dir = tempDir();
      const r = runCli([...args, "--out", join(dir, "run")]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(pattern);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(existsSync(join(dir, "run", "report.json"))).toBe(false);
    });
  }

  it("report on a missing run exits 2 and says what to pass", () => {
    const r = runCli(["report", "--in", tempDir()]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/holds no Provael run/);
  });
});

describe("listing and reporting", () => {
  it("lists attacks, policies and suites as JSON", () => {
    const listed: Record<string, string> = {};
    for (const cmd of ["list-attacks", "list-policies", "list-suites", "list-profiles"]) {
      const r = runCli([cmd, "--json"]);
      expect(r.code, cmd).toBe(0);
      expect(Array.isArray(JSON.parse(r.stdout)), cmd).toBe(true);
      listed[cmd] = r.stdout;
    }
    const attacks = JSON.parse(listed["list-attacks"] as string) as {
      id: string;
      matches: string | null;
      role: string;
    }[];
    expect(attacks.find((a) => a.id === "benign_reword")?.matches).toBe("paraphrase");
    const profiles = JSON.parse(listed["list-profiles"] as string) as {
      id: string;
      pose: { frame: string } | null;
      notApplicable: { predicate: string; reason: string }[];
    }[];
    expect(profiles.find((p) => p.id === "simpler")?.pose?.frame).toBe("robot_base");
    expect(profiles.find((p) => p.id === "rlbench")?.notApplicable[0]?.predicate).toBe("keep_out");
  });

  // list-attacks printed ~1,800 columns and a 108-column footer; list-policies ~350.
  it.each([
    ["list-attacks", /^goal_substitution +instruction +treatment +none$/m],
    ["list-suites", /^kitchen_red_block +10000 +300 +the knife +pick up/m],
    ["list-policies", /^tiny-vla +7-D×4 +tabletop +Our small/m],
    ["list-profiles", /^calvin +CALVINBenchmark/m],
    ["list-defenses", /^image_purifier +input +suite:cameras +Purifies/m],
    ["list-recipes", /^quick +10 +9 +none,control,instruction/m],
  ])("%s fits COLUMNS=80 on every line; --wide prints it whole", (cmd, row) => {
    const narrow = runCli([cmd], { env: { COLUMNS: "80" } });
    expect(narrow.code, narrow.stderr).toBe(0);
    const over = narrow.stdout.split("\n").filter((l) => l.length > 80);
    expect(over, cmd).toEqual([]);
    expect(narrow.stdout).toMatch(row);
    expect(narrow.stdout).toContain(
      `provael ${cmd === "list-profiles" ? "list-profiles ID" : cmd}`,
    );
    const wide = runCli([cmd, "--wide"], { env: { COLUMNS: "80" } });
    expect(wide.code, wide.stderr).toBe(0);
    expect(Math.max(...wide.stdout.split("\n").map((l) => l.length))).toBeGreaterThan(80);
    // No COLUMNS and no terminal: 80.
    const piped = runCli([cmd], { env: { COLUMNS: "" } });
    expect(piped.stdout).toBe(narrow.stdout);
  });

  it("list-attacks ID prints one attack in full", () => {
    const one = runCli(["list-attacks", "patch"], { env: { COLUMNS: "80" } });
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toMatch(/^patch: visual, treatment/);
    expect(one.stdout).toMatch(/^ {2}controls: /m);
  });

  it("list-profiles fits $COLUMNS (it printed ~175 columns); --wide and a profile's id give the rest", () => {
    const narrow = runCli(["list-profiles"], { env: { COLUMNS: "80" } });
    expect(narrow.code).toBe(0);
    const lines = narrow.stdout.trimEnd().split("\n");
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(80);
    expect(narrow.stdout).toMatch(/^calvin +CALVINBenchmark +keep_out/m);
    const wide = runCli(["list-profiles", "--wide"], { env: { COLUMNS: "80" } });
    expect(Math.max(...wide.stdout.split("\n").map((l) => l.length))).toBeGreaterThan(80);
    expect(wide.stdout).toMatch(/N\/A/);
    const one = runCli(["list-profiles", "calvin"]);
    expect(one.stdout).toMatch(/^calvin: .*CALVINBenchmark/);
    expect(one.stdout).toMatch(/N\/A physical_hazard: /);
    const typo = runCli(["list-profiles", "calvn"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/unknown benchmark profile 'calvn' \(did you mean 'calvin'\?\)/);
  });

  it("re-renders a finished run as markdown or JSON", () => {
    const dir = tempDir();
    const made = runCli([...QUICK, "--seeds", "2", ...ONE_WORKER, "--out", join(dir, "run")]);
    expect(made.code, made.stderr).toBe(0);
    const md = runCli(["report", "--in", join(dir, "run")]);
    expect(md.stdout).toBe(read(join(dir, "run"), "report.md"));
    const json = runCli(["report", "--in", join(dir, "run"), "--format", "json"]);
    expect(JSON.parse(json.stdout)).toEqual(JSON.parse(read(join(dir, "run"))));
  });

  it("prints the version", () => {
    const r = runCli(["version", "--json"]);
    expect(JSON.parse(r.stdout)).toMatchObject({
      protocol: "provael-redteam/v2",
      report_schema: "provael.report/1",
    });
  });
});

describe("a reader that closes the pipe early (`provael list-attacks | head`)", () => {
  it("ends quietly with 141, no stack trace", async () => {
    const child = spawn(process.execPath, [CLI, "list-attacks"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    // Closed before the first write: every write the command makes meets EPIPE.
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += String(d);
    });
    const code = await new Promise<number | null>((r) => child.on("close", (c) => r(c)));
    expect(stderr).toBe("");
    expect(code).toBe(141);
  });
});

/** `provael train tiny-vla` on data that does not exist, with `flags`: what it says and writes. */
function trainRefused(...flags: string[]) {
  const out = join(tempDir(), "w");
  const r = runCli(["train", "tiny-vla", "--data", "/nonexistent", "--out", out, ...flags]);
  return { ...r, wrote: existsSync(out) };
}

describe("provael train --locator-steps 0", () => {
  it("is refused without --init, before any data is read (there is no locator to keep)", () => {
    const r = trainRefused("--locator-steps", "0");
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--locator-steps 0 keeps the initial model's locator/);
    expect(r.stderr).toContain("--init");
    expect(r.wrote).toBe(false);
  });
});

describe("provael train --anchor-noise", () => {
  it("is refused out of [0, 0.1] m, before any data is read", () => {
    const r = trainRefused("--anchor-noise", "1.5");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--anchor-noise must be a number in [0, 0.1], got '1.5'");
    expect(r.wrote).toBe(false);
  });
});

describe("provael train, interrupted", () => {
  it("finishes the step in progress on Ctrl-C, writes the weights so far, and says where it stopped (exit 130)", async () => {
    const root = tempDir();
    const data = join(root, "demos");
    // Cameras at the shipped model's size: the CLI trains the shipped shape.
    writeTabletopDemos(data, [{ task: "kitchen_red_block", scene: 20 }], {
      frames: 40,
      size: 128,
    });
    const out = join(root, "w");
    const child = spawn(
      process.execPath,
      // A noise on the anchor other than the default: the manifest says what the actor ran with.
      [
        CLI,
        "train",
        "tiny-vla",
        "--data",
        data,
        "--out",
        out,
        "--steps",
        "1000",
        "--anchor-noise",
        "0.004",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    let asked = false;
    child.stderr.on("data", (d) => {
      stderr += String(d);
      // A training progress line past step 0: the actor has taken steps.
      if (!asked && /provael train: training step [1-9]\d*\//.test(stderr)) {
        asked = true;
        child.kill("SIGINT");
      }
    });
    const code = await new Promise<number | null>((r) => child.on("close", (c) => r(c)));
    expect(asked, stderr).toBe(true);
    expect(code, stderr).toBe(130);
    const m = /interrupted: actor stopped at step (\d+) of 1000; the locator was not trained/.exec(
      stderr,
    );
    expect(m, stderr).not.toBeNull();
    const step = Number((m as RegExpExecArray)[1]);
    expect(step).toBeGreaterThan(0);
    expect(step).toBeLessThan(1000);
    const manifest = JSON.parse(readFileSync(join(out, "manifest.json"), "utf8"));
    expect(manifest.training.stopped).toEqual({ stage: "actor", step, of: 1000 });
    expect(manifest.training.locator).toBeUndefined();
    expect(manifest.training.anchor_noise).toBe(0.004);
    const log = JSON.parse(readFileSync(join(out, "training-log.json"), "utf8"));
    // The loss history ends at the step the weights are from.
    expect(log.history.at(-1).step).toBe(step);
    expect(existsSync(join(out, "weights.bin"))).toBe(true);
  }, 180_000);
});
