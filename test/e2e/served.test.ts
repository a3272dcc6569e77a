/**
 * The built CLI in two processes: `provael serve-policy` serves the stub policy, and
 * `provael attack --policy <protocol> --policy-url …` plays the stub suite against it. The arms
 * table must equal the in-process stub's, for each protocol.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CLI, runCli } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

const PLAN = [
  "--suite",
  "stub",
  "--attacks",
  "none,control,instruction",
  "--seeds",
  "2",
  "--horizon",
  "8",
  "--no-html",
  // The in-process run in one thread (a served run always is): a worker pool would load the
  // library once more per core, and is not what is compared.
  "--workers",
  "1",
];

/** The arms table and the summary lines (everything before the "wrote …" line). */
/** The arms table as printed, less the plan header's policy id (the one thing a served run changes). */
// The caveats name the policy id in their calibrate command, which differs by design between a
// served and an in-process run; the table and the rates above them must not.
const armsTable = (stdout: string) =>
  (stdout.split("\nwrote ")[0]?.split("\ncaveats:")[0]?.trim() ?? "").replace(
    /^\S+ on (\S+):/m,
    "POLICY on $1:",
  );

let local: ReturnType<typeof runCli> | null = null;
/** The in-process stub's output, played once for every protocol. */
function localRun() {
  local ??= runCli(["attack", "--policy", "stub", ...PLAN, "--out", join(tempDir(), "local")]);
  return local;
}

/** Two processes and a run between them: seconds on 2 quiet cores, minutes under a full suite. */
const SERVED_MS = 300_000;

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
});

/** `provael attack` against a served policy at `url`, with further flags. */
const attackServed = (protocol: string, url: string, args: string[]) =>
  runCli(["attack", "--policy", protocol, "--policy-url", url, ...args]);

/** Starts `provael serve-policy` and resolves with the address it printed. */
function servePolicy(
  protocol: string,
  policy = "stub",
  extra: string[] = [],
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [
      CLI,
      "serve-policy",
      "--policy",
      policy,
      "--protocol",
      protocol,
      "--port",
      "0",
      "--json",
      ...extra,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stderr?.on("data", (d) => {
      err += d;
    });
    child.stdout?.on("data", (d) => {
      out += d;
      const line = out.split("\n")[0];
      if (out.includes("\n") && line) resolve({ url: JSON.parse(line).url, child });
    });
    child.once("exit", (code) => reject(new Error(`serve-policy exited ${code}: ${err}`)));
  });
}

describe("provael serve-policy + attack (built CLI, two processes)", () => {
  it.each(["openpi", "openvla", "vla-eval"])(
    "over %s: the same arms table as the in-process stub",
    async (protocol) => {
      const dir = tempDir();
      const local = localRun();
      expect(local.code, local.stderr).toBe(0);
      const { url, child } = await servePolicy(protocol);
      if (protocol === "openpi") {
        const health = await fetch(`${url.replace("ws:", "http:")}/healthz`);
        expect(await health.text()).toBe("OK\n");
      }
      const served = attackServed(protocol, url, [
        "--timeout",
        "5000",
        ...PLAN,
        "--concurrency",
        "4",
        "--out",
        join(dir, "served"),
      ]);
      expect(served.code, served.stderr).toBe(0);
      expect(armsTable(served.stdout)).toBe(armsTable(local.stdout));
      expect(armsTable(served.stdout)).toContain("goal_substitution");
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    },
    SERVED_MS,
  );

  it("says which policy server is missing instead of playing episodes", () => {
    const dir = tempDir();
    const r = runCli([
      "attack",
      "--policy",
      "openpi",
      "--policy-url",
      "ws://127.0.0.1:9",
      "--retries",
      "0",
      ...PLAN,
      "--out",
      join(dir, "run"),
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/cannot reach the openpi server at ws:\/\/127\.0\.0\.1:9/);
  });
});

/** The learned policy on the physics suite: the same actions served as in process, step for step. */
const TINY = [
  "--suite",
  "tabletop",
  "--tasks",
  "kitchen_red_block",
  "--attacks",
  "none,goal_substitution",
  "--seeds",
  "1",
  "--horizon",
  "24",
  "--no-html",
  "--workers",
  "1",
];

describe("provael serve-policy --policy tiny-vla + attack over each protocol", () => {
  let tinyLocal: ReturnType<typeof runCli> | null = null;
  const steps = (dir: string) =>
    readFileSync(join(dir, "trajectories.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).action);
  it.each(["openpi", "openvla", "vla-eval"])(
    "over %s: the same arms table and the same action at every step as in process",
    async (protocol) => {
      const dir = tempDir();
      tinyLocal ??= runCli([
        "attack",
        "--policy",
        "tiny-vla",
        ...TINY,
        "--out",
        join(dir, "local"),
      ]);
      expect(tinyLocal.code, tinyLocal.stderr).toBe(0);
      const localDir = tinyLocal.stdout.match(/wrote (\S+)\/report\.json/)?.[1] as string;
      // OpenVLA's body carries one camera; the shipped mapping file adds the wrist on both sides.
      const layout =
        protocol === "openvla"
          ? [
              "--layout",
              join(import.meta.dirname, "../../examples/layouts/openvla-two-cameras.yaml"),
            ]
          : [];
      const { url, child } = await servePolicy(protocol, "tiny-vla", layout);
      const served = attackServed(protocol, url, [
        ...layout,
        ...TINY,
        "--out",
        join(dir, "served"),
      ]);
      expect(served.code, served.stderr).toBe(0);
      expect(armsTable(served.stdout)).toBe(armsTable(tinyLocal.stdout));
      expect(steps(join(dir, "served"))).toEqual(steps(localDir));
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    },
    SERVED_MS,
  );
});
