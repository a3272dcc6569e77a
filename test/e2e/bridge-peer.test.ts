/**
 * The Python test peer (test/peers/libero_peer.py), which plays a LIBERO-shaped benchmark the
 * way vla-eval does, against the built CLI: first straight against a vla-eval model server
 * (`provael serve-policy --protocol vla-eval`), so the peer itself is known to speak the
 * protocol as upstream does; then through `provael bridge --profile libero` in front of the
 * same server, where the bridge must read the pose from `states`, judge the keep-out predicate
 * on every step, take success from EPISODE_END and hold arms to one shared start.
 */
import { type ChildProcess, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadProfile, profilePredicates, profileState } from "../../src/bridge/profile.js";
import { startCli, stopStarted } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

/** Debian's interpreter: the pyenv python3 on PATH lacks python3-websockets and friends. */
const PYTHON = "/usr/bin/python3";
const PEER = join(import.meta.dirname, "..", "peers", "libero_peer.py");

interface PeerEpisode {
  task: string;
  episode_idx: number;
  poses: [number, number, number][];
  actions: number[][];
  steps?: number;
  success?: boolean;
  error: string | null;
}

interface PeerSummary {
  hello: { observation_params?: Record<string, unknown>; model_server?: string };
  episodes: PeerEpisode[];
}

/** Runs the peer to the end; its summary comes back as JSON on stdout. */
function runPeer(url: string, args: string[] = []): PeerSummary {
  const r = spawnSync(PYTHON, [PEER, "--url", url, "--timeout", "20", ...args], {
    encoding: "utf8",
    timeout: 120_000,
  });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`libero_peer exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout) as PeerSummary;
}

afterAll(stopStarted);

const servePolicy = () =>
  startCli(["serve-policy", "--policy", "stub", "--protocol", "vla-eval", "--port", "0", "--json"]);

describe("LIBERO-shaped Python peer (vla-eval's benchmark side)", () => {
  it("plays a vla-eval model server as upstream does: errors keep the connection, success from the fake", async () => {
    const { line, child } = await servePolicy();
    const url = (line as { url: string }).url;

    // A config that turns the state off (the config's params win over the server's asks): the
    // peer sends none, each first observation fails with an ERROR, and the next episode starts.
    const bare = runPeer(url, ["--tasks", "2", "--episodes", "2", "--param", "send_state=false"]);
    expect(bare.episodes).toHaveLength(4);
    for (const e of bare.episodes) expect(e.error).toMatch(/observation_failed.*states/);

    // The server's HELLO asks for the state its layout reads, so a config that says nothing
    // sends it (vla-eval's orchestrator merges the ask), and the stub heads for the named object.
    const run = runPeer(url, ["--tasks", "2", "--episodes", "2"]);
    expect(run.hello.observation_params).toEqual({ send_state: true });
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

    // Images as PIL's JPEG (vla-eval's other image format) decode the same way: same outcomes.
    const jpeg = runPeer(url, [
      ...["--tasks", "2", "--episodes", "2", "--param", "send_state=true"],
      ...["--image-format", "jpeg"],
    ]);
    expect(jpeg.episodes.map((e) => [e.task, e.episode_idx, e.success, e.error])).toEqual(
      run.episodes.map((e) => [e.task, e.episode_idx, e.success, e.error]),
    );

    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});

interface Episode {
  cell: string;
  task: string;
  arm: string;
  seed: number;
  scene_digest: string | null;
  task_success: boolean | null;
  judged_steps: number;
  steps: number;
  error: { code: string; message: string } | null;
}

interface Step {
  cell: string;
  step: number;
  pose: number[] | null;
  unsafe: boolean | null;
}

describe("provael bridge --profile libero in front of a vla-eval model server", () => {
  it("reads the pose from states, judges every step, records success and checks pairing", async () => {
    const upstream = await servePolicy();
    const bridge = (attacks: string, out: string) =>
      startCli([
        "bridge",
        "--policy",
        "vla-eval",
        "--policy-url",
        (upstream.line as { url: string }).url,
        "--attacks",
        attacks,
        "--profile",
        "libero",
        "--out",
        out,
        "--port",
        "0",
        "--json",
      ]);
    const stop = (child: ChildProcess) => {
      const exited = new Promise<number | null>((r) => child.once("exit", r));
      child.kill("SIGTERM");
      return exited;
    };
    const out = join(tempDir(), "bridge");
    const { line, child } = await bridge("none,freeze", out);
    const arms = (line as { arms: Record<string, string> }).arms;
    const plan = ["--tasks", "2", "--episodes", "2"];

    // The bridge asks for the state in its HELLO reply; the peer sends it only then.
    const none = runPeer(arms.none as string, plan);
    expect(none.hello.observation_params?.send_state).toBe(true);
    expect(none.episodes.map((e) => e.error)).toEqual([null, null, null, null]);
    const freeze = runPeer(arms.freeze as string, plan);
    expect(freeze.episodes.map((e) => e.error)).toEqual([null, null, null, null]);
    expect(await stop(child)).toBe(0);

    const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as {
      episodes: Episode[];
      calibration: Record<string, { source: string }>;
    };
    const steps = readFileSync(join(out, "trajectories.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Step);
    const byArm = (arm: string) => report.episodes.filter((e) => e.arm === arm);
    const key = (task: string, seed: number) => `${task}#${seed}`;

    // Success comes from EPISODE_END, episode by episode.
    for (const [arm, peer] of [
      ["none", none],
      ["freeze", freeze],
    ] as const) {
      const got = Object.fromEntries(byArm(arm).map((e) => [key(e.task, e.seed), e.task_success]));
      const want = Object.fromEntries(
        peer.episodes.map((e) => [key(e.task, e.episode_idx), e.success]),
      );
      expect(got).toEqual(want);
    }
    expect(
      Object.values(Object.fromEntries(byArm("none").map((e) => [e.cell, e.task_success]))),
    ).toContain(true);

    // Pairing: freeze started every (task, seed) from the same first observation as none.
    const noneScenes = Object.fromEntries(
      byArm("none").map((e) => [key(e.task, e.seed), e.scene_digest]),
    );
    for (const e of byArm("freeze")) expect(e.scene_digest).toBe(noneScenes[key(e.task, e.seed)]);

    // Every judged step's verdict is the keep-out boxes' verdict on a pose the peer sent.
    const profile = loadProfile("libero");
    let unsafe = 0;
    let safe = 0;
    for (const [arm, peer] of [
      ["none", none],
      ["freeze", freeze],
    ] as const) {
      for (const e of byArm(arm)) {
        const sent = peer.episodes.find((p) => p.task === e.task && p.episode_idx === e.seed);
        const keepOut = profilePredicates(profile, e.task).find((q) => q.id === "keep_out");
        const mine = steps.filter((s) => s.cell === e.cell).sort((a, b) => a.step - b.step);
        expect(mine.length).toBe(sent?.steps);
        const judged = mine.filter((s) => s.unsafe !== null && s.pose !== null);
        // At most the last step waits for an observation that never comes.
        expect(judged.length).toBeGreaterThanOrEqual(mine.length - 1);
        expect(e.judged_steps).toBe(judged.length);
        const mm = (p: number[]) => p.map((v) => Math.round(v * 1e4)).join(",");
        const poses = new Set((sent?.poses ?? []).map(mm));
        for (const s of judged) {
          expect(poses.has(mm(s.pose as number[]))).toBe(true);
          const verdict = keepOut?.evaluate(profileState(profile, { states: s.pose })).unsafe;
          expect(s.unsafe).toBe(verdict);
          if (verdict) unsafe += 1;
          else safe += 1;
        }
      }
    }
    // Both verdicts occur: the first task starts inside the left box and drives out of it.
    expect(unsafe).toBeGreaterThan(0);
    expect(safe).toBeGreaterThan(0);
    for (const t of Object.keys(report.calibration))
      expect(report.calibration[t]?.source).toBe("suite-default");
  });
});
