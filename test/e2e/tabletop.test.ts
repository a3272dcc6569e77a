/**
 * The physics suite end to end through the built CLI: bit-identical reports across processes and
 * worker counts, shards merged into the unsharded report, and a broken policy recorded as an
 * error rather than a crash. Small plans (scripted expert, no rendering, short horizon) keep it
 * to seconds.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveAttacks } from "../../src/attacks/index.js";
import { policies } from "../../src/policies/index.js";
import { runAttack } from "../../src/runner/run.js";
import { runCli } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

const ARGS = [
  "attack",
  "--suite",
  "tabletop",
  "--policy",
  "scripted",
  "--attacks",
  "none,goal_substitution",
  "--tasks",
  "kitchen_red_block,pantry_orange_cup",
  "--seeds",
  "2",
  "--horizon",
  "60",
  "--no-html",
];
const read = (dir: string) => readFileSync(join(dir, "report.json"), "utf8");

describe("tabletop through the CLI", () => {
  it("writes identical report.json bytes in two processes, with 1 and 2 workers, and when sharded", () => {
    const dir = tempDir();
    const a = runCli([...ARGS, "--workers", "1", "--out", join(dir, "a")]);
    expect(a.code, a.stderr).toBe(0);
    const b = runCli([...ARGS, "--workers", "2", "--out", join(dir, "b")]);
    expect(b.code, b.stderr).toBe(0);
    expect(read(join(dir, "b"))).toBe(read(join(dir, "a")));
    // Two shards: each process loads the physics engine (most of a run this small), and two
    // already split every task's cells between processes.
    for (const k of [0, 1])
      expect(
        runCli([...ARGS, "--workers", "1", "--shard", `${k}/2`, "--out", join(dir, `s${k}`)]).code,
      ).toBe(0);
    const m = runCli(["merge", "--in", join(dir, "s0"), join(dir, "s1"), "--out", join(dir, "m")]);
    expect(m.code, m.stderr).toBe(0);
    expect(read(join(dir, "m"))).toBe(read(join(dir, "a")));
    const report = JSON.parse(read(join(dir, "a")));
    expect(report.run.suite).toBe("tabletop");
    expect(report.episodes[0].scene_digest).toMatch(/^sha256:/);
  }, 240_000);
});

describe("a broken policy on tabletop", () => {
  it("records NaN and wrong-length actions as policy errors and goes on", async () => {
    const scripted = policies.get("scripted");
    const original = scripted.load;
    scripted.load = async (o) => {
      const inst = await original(o);
      let step = 0;
      return {
        ...inst,
        capabilities: inst.capabilities,
        reset: (e) => {
          step = 0;
          return inst.reset(e);
        },
        close: () => inst.close(),
        act: async (obs) => {
          step += 1;
          if (step === 5 && obs.instruction.startsWith("Change"))
            return new Float32Array([0, 0, Number.NaN, 0, 0, 0, 0]);
          if (step === 5 && obs.instruction.includes("knife")) return new Float32Array(3);
          return inst.act(obs);
        },
      };
    };
    try {
      const { report } = await runAttack({
        plan: {
          policy: "scripted",
          suite: "tabletop",
          tasks: ["kitchen_red_block"],
          arms: resolveAttacks(["none", "goal_substitution"]),
          seed: 0,
          seeds: 4,
          repeats: 1,
          horizon: 20,
          termination: "fixed-horizon",
          scene_pin: 0,
          policy_options: {},
          attack_params: {},
          calibration: {},
        },
        out: join(tempDir(), "run"),
        resume: false,
        concurrency: 1,
        policyOptions: {},
        commandLine: [],
        finish: { html: false },
      });
      expect(report?.arms.none?.errors).toBe(0);
      expect(report?.arms.goal_substitution?.errors).toBe(4);
      expect(report?.arms.goal_substitution?.unsafe.n).toBe(0);
      expect(Object.keys(report?.error_counts ?? {})).toEqual(["policy/bad-action"]);
      const messages = report?.episodes.filter((e) => e.error).map((e) => e.error?.message) ?? [];
      expect(messages.some((m) => /NaN/.test(m ?? "") || /need 7 finite/.test(m ?? ""))).toBe(true);
    } finally {
      scripted.load = original;
    }
  }, 120_000);
});
