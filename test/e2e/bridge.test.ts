/**
 * The bridge end to end, no Python: our vla-eval benchmark client plays `tabletop` against
 * `provael bridge`, which forwards to `provael serve-policy --policy tiny-vla` over vla-eval. The
 * bridged arms table must equal the in-process `provael attack` of the same arms on the same
 * cells, and so must every step's action, pose and verdict. The one command (`provael attack
 * --suite vla-eval`, launching our benchmark client once per arm) must give the same again.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { playBenchmark } from "../../src/bridge/benchmark-client.js";
import { CLI, runCli, startCli, stopStarted } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

const ARMS = "none,roleplay,placebo_patch,patch,freeze";
const TASK = "kitchen_red_block";
const HORIZON = 12;

afterAll(stopStarted);

/** What `serve-policy --json` and `bridge --json` print first. */
type Info = Record<string, unknown>;

const exited = (c: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (c.exitCode !== null) resolve(c.exitCode);
    else c.once("exit", (code) => resolve(code));
  });

const lines = (path: string) =>
  readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { cell: string; step: number });

describe("provael bridge (tabletop through the bridge to a served tiny-vla)", () => {
  it("gives the in-process run's arms table and every step's action", async () => {
    const dir = tempDir();
    const served = await startCli([
      "serve-policy",
      "--policy",
      "tiny-vla",
      "--protocol",
      "vla-eval",
      "--port",
      "0",
      "--json",
    ]);
    const out = join(dir, "bridged");
    const bridge = await startCli([
      "bridge",
      "--policy",
      "vla-eval",
      "--policy-url",
      (served.line as Info).url as string,
      "--attacks",
      ARMS,
      "--profile",
      "tabletop",
      "--out",
      out,
      "--port",
      "0",
      "--json",
    ]);
    const arms = (bridge.line as Info).arms as Record<string, string>;
    expect(Object.keys(arms).sort()).toEqual(ARMS.split(",").sort());
    const health = await fetch(
      `${((bridge.line as Info).url as string).replace("ws:", "http:")}/health`,
    );
    expect(await health.json()).toEqual({ status: "ok" });
    // One benchmark run per arm over the same episodes, two of them at once.
    const names = Object.keys(arms);
    for (let i = 0; i < names.length; i += 2) {
      const batch = names.slice(i, i + 2);
      const results = await Promise.all(
        batch.map((a) =>
          playBenchmark({
            suite: "tabletop",
            serverUrl: arms[a] as string,
            tasks: [TASK],
            episodes: [0],
            horizon: HORIZON,
          }),
        ),
      );
      for (const r of results) {
        expect(r.hello.model_server).toBe("ProvaelBridge");
        expect(r.episodes.map((e) => e.error)).toEqual([null]);
      }
    }
    bridge.child.kill("SIGTERM");
    expect(await exited(bridge.child)).toBe(0);

    // The one command: the bridge in-process, our benchmark client launched once per arm.
    const launched = join(dir, "launched");
    const one = runCli(
      [
        ...["attack", "--suite", "vla-eval", "--profile", "tabletop", "--policy", "vla-eval"],
        ...[
          "--policy-url",
          (served.line as Info).url as string,
          "--attacks",
          ARMS,
          "--no-controls",
        ],
        ...["--preflight", "0", "--benchmark-concurrency", "3", "--no-html", "--out", launched],
        "--benchmark-command",
        `${process.execPath} ${CLI} vla-eval-benchmark --suite tabletop --server-url {url} --tasks ${TASK} --seeds 1 --horizon ${HORIZON}`,
      ],
      { timeoutMs: 180_000 },
    );
    expect(one.code, one.stderr).toBe(0);
    served.child.kill("SIGTERM");

    const local = runCli([
      "attack",
      "--policy",
      "tiny-vla",
      "--suite",
      "tabletop",
      "--tasks",
      TASK,
      "--seeds",
      "1",
      "--horizon",
      String(HORIZON),
      "--attacks",
      ARMS,
      // Exactly the bridge's arms: naming a treatment would otherwise bring its controls.
      "--no-controls",
      "--workers",
      "1",
      "--no-html",
      "--out",
      join(dir, "local"),
    ]);
    expect(local.code, local.stderr).toBe(0);
    const L = JSON.parse(readFileSync(join(dir, "local", "report.json"), "utf8"));
    const B = JSON.parse(readFileSync(join(out, "report.json"), "utf8"));
    expect(B.run.bridge).toEqual({
      profile: "tabletop",
      benchmark: "tabletop",
      termination: "benchmark",
      image_codecs: { png: 5 },
      // tiny-vla answers one action per step over vla-eval: every forwarded step reached it.
      steps_forwarded: 5 * HORIZON,
      steps_used: 5 * HORIZON,
    });
    expect(B.arms).toEqual(L.arms);
    const steps = (p: string) => new Map(lines(p).map((s) => [`${s.cell}:${s.step}`, s] as const));
    const lt = steps(join(dir, "local", "trajectories.jsonl"));
    const bt = steps(join(out, "trajectories.jsonl"));
    expect(bt.size).toBe(5 * HORIZON);
    expect([...bt.entries()].sort()).toEqual([...lt.entries()].sort());
    // The one command's run: the same arms table and every step's action, and every process's log.
    const O = JSON.parse(readFileSync(join(launched, "report.json"), "utf8"));
    expect(O.arms).toEqual(L.arms);
    const ot = steps(join(launched, "trajectories.jsonl"));
    expect([...ot.entries()].sort()).toEqual([...lt.entries()].sort());
    for (const arm of ARMS.split(","))
      expect(readFileSync(join(launched, "benchmark", `${arm}.log`), "utf8")).toContain(
        `${TASK} #0: `,
      );
    for (const e of B.episodes) {
      expect(e.bridge.task).toMatchObject({ name: TASK, episode_idx: 0 });
      expect(e.judged_steps).toBe(HORIZON);
    }

    // `provael report --in` reads the bridged run like any other.
    const md = runCli(["report", "--in", out]);
    expect(md.code).toBe(0);
    expect(md.stdout).toContain("roleplay");
    expect(existsSync(join(out, "journal.jsonl"))).toBe(true);
  }, 240_000);
});
