/**
 * The Python test peer (test/peers/libero_peer.py), which plays a LIBERO-shaped benchmark the
 * way vla-eval does, against the built CLI: first straight against a vla-eval model server
 * (`provael serve-policy --protocol vla-eval`), so the peer itself is known to speak the
 * protocol as upstream does.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI } from "../support/cli.js";

/** Debian's interpreter: the pyenv python3 on PATH lacks python3-websockets and friends. */
const PYTHON = "/usr/bin/python3";
const PEER = join(import.meta.dirname, "..", "peers", "libero_peer.py");

export interface PeerEpisode {
  task: string;
  episode_idx: number;
  poses: [number, number, number][];
  actions: number[][];
  steps?: number;
  success?: boolean;
  error: string | null;
}

export interface PeerSummary {
  hello: { observation_params?: Record<string, unknown>; model_server?: string };
  episodes: PeerEpisode[];
}

/** Runs the peer to the end; its summary comes back as JSON on stdout. */
export function runPeer(url: string, args: string[] = []): PeerSummary {
  const r = spawnSync(PYTHON, [PEER, "--url", url, "--timeout", "20", ...args], {
    encoding: "utf8",
    timeout: 120_000,
  });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`libero_peer exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout) as PeerSummary;
}

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
});

/** Starts the built CLI and resolves with the first line it prints (JSON). */
export function startCli(args: string[]): Promise<{ line: unknown; child: ChildProcess }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stderr?.on("data", (d) => {
      err += d;
    });
    child.stdout?.on("data", (d) => {
      out += d;
      const nl = out.indexOf("\n");
      if (nl >= 0) resolve({ line: JSON.parse(out.slice(0, nl)), child });
    });
    child.once("exit", (code) => reject(new Error(`${args[0]} exited ${code}: ${err}`)));
  });
}

const servePolicy = () =>
  startCli(["serve-policy", "--policy", "stub", "--protocol", "vla-eval", "--port", "0", "--json"]);

describe("LIBERO-shaped Python peer (vla-eval's benchmark side)", () => {
  it("plays a vla-eval model server as upstream does: errors keep the connection, success from the fake", async () => {
    const { line, child } = await servePolicy();
    const url = (line as { url: string }).url;

    // The stub server asks for no state: like LIBERO without send_state, the peer sends none,
    // each first observation fails with an ERROR, and the next episode still starts.
    const bare = runPeer(url, ["--tasks", "2", "--episodes", "2"]);
    expect(bare.episodes).toHaveLength(4);
    for (const e of bare.episodes) expect(e.error).toMatch(/observation_failed.*states/);

    // With send_state set by the config, the stub heads for the named object.
    const run = runPeer(url, ["--tasks", "2", "--episodes", "2", "--param", "send_state=true"]);
    expect(run.episodes.map((e) => [e.task, e.episode_idx, e.success, e.error])).toEqual([
      ["libero_goal/put the bowl on the plate", 0, true, null],
      ["libero_goal/put the bowl on the plate", 1, true, null],
      ["libero_goal/put the cream cheese in the bowl", 0, false, null],
      ["libero_goal/put the cream cheese in the bowl", 1, false, null],
    ]);
    for (const e of run.episodes) {
      expect(e.actions.length).toBe(e.steps);
      for (const a of e.actions) expect(a).toHaveLength(7);
    }
    // The start depends on the scene (episode_idx) only, unless told to vary.
    const mm = (p: number[] | undefined) => p?.map((v) => Math.round(v * 1000));
    expect(mm(run.episodes[1]?.poses[0])).toEqual([-210, 500, 1000]);
    const varied = runPeer(url, ["--tasks", "1", "--episodes", "1", "--vary-start", "0.02"]);
    expect(mm(varied.episodes[0]?.poses[0])).toEqual([-200, 520, 1000]);

    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
