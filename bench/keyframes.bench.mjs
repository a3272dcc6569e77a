// What keeping keyframes costs a bridged episode. Two bridges (child processes, arm `none`,
// profile libero) forward to one upstream (the stub over vla-eval, no added latency, so the
// bridge's own work is the whole step): one as shipped, which keeps each episode's frames
// (strided, shrunk, written as PNGs under frames/<cell>/ when the episode ends), and one whose
// Keyframes class is made a no-op in its process, the bridge without keyframes. A benchmark loop
// here plays LIBERO-shaped episodes (256x256 PNG agent view and wrist camera, 8-D states,
// LIBERO-Spatial's 220 steps, and SIM_MS, default 10, of the benchmark's own simulation and
// rendering between an action and the next observation) through each, rounds alternating, and
// reports per episode the wall time, the bridge's CPU time (user + system, which a shared
// machine's load moves less than wall time), the frames written, and the step round trip (p50,
// p99: the bridge keeps a step's frames after answering it); the figures are medians over rounds.
//
// Run after `npm run build`: node bench/keyframes.bench.mjs [episodes per round] [steps] [rounds]
import { fork } from "node:child_process";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { Keyframes } from "../dist/bridge/keyframes.js";
import { loadProfile } from "../dist/bridge/profile.js";
import { startBridge } from "../dist/bridge/server.js";
import { float64Array, uint8Array } from "../dist/policies/served/codec/ndarray.js";
import { decodeEnvelope, encodeEnvelope } from "../dist/policies/served/codec/vla-eval.js";
import { startPolicyServer } from "../dist/policies/served/server/index.js";
import { stubPolicy } from "../dist/policies/stub.js";

const role = process.argv[2];

if (role === "--upstream") {
  const server = await startPolicyServer({
    policy: stubPolicy,
    protocol: "vla-eval",
    host: "127.0.0.1",
    port: 0,
  });
  process.send({ url: server.url });
} else if (role === "--bridge") {
  const keep = process.argv[4] === "keep";
  if (!keep) {
    // The bridge without keyframes: nothing offered is kept, nothing is written.
    Keyframes.prototype.offer = () => {};
    Keyframes.prototype.write = () => 0;
  }
  const out = join(mkdtempSync(join(tmpdir(), "provael-keyframes-bench-")), "run");
  const bridge = await startBridge({
    policy: "vla-eval",
    policyOptions: { url: process.argv[3] },
    arms: ["none"],
    profile: loadProfile("libero"),
    out,
    host: "127.0.0.1",
    port: 0,
  });
  process.send({ url: bridge.armUrls.none });
  const frames = () => {
    try {
      return readdirSync(join(out, "frames"), { recursive: true }).filter((f) =>
        String(f).endsWith(".png"),
      ).length;
    } catch {
      return 0;
    }
  };
  process.on("message", () => process.send({ cpu: process.cpuUsage(), frames: frames() }));
} else {
  const episodes = Number(process.argv[2] ?? 2);
  const steps = Number(process.argv[3] ?? 220);
  const ROUNDS = Number(process.argv[4] ?? 3);
  const SIM_MS = Number(process.env.SIM_MS ?? 10);
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const child = (args) =>
    new Promise((resolve) => {
      const c = fork(new URL(import.meta.url).pathname, args, { stdio: "inherit" });
      c.once("message", (m) => resolve({ c, url: m.url }));
    });
  const stats = (c) =>
    new Promise((resolve) => {
      c.once("message", (m) =>
        resolve({ cpu: (m.cpu.user + m.cpu.system) / 1000, frames: m.frames }),
      );
      c.send("stats");
    });
  const upstream = await child(["--upstream"]);
  const paths = {
    with: await child(["--bridge", upstream.url, "keep"]),
    without: await child(["--bridge", upstream.url, "none"]),
  };

  // Two frames per camera, alternated, so a kept step decodes a frame that changed. The
  // observations are encoded (PNG) once, here: the benchmark's own encoding is not the bridge's.
  const frame = (k) =>
    uint8Array(
      Uint8Array.from({ length: 256 * 256 * 3 }, (_, i) => (i * (37 + k) + (i >> 8)) & 255),
      [256, 256, 3],
    );
  const observation = (k, seq) =>
    encodeEnvelope({
      type: "observation",
      payload: {
        images: { agentview: frame(k), wrist: frame(k + 2) },
        task_description: "pick up the black bowl and place it on the plate",
        states: float64Array([0.1, 0, 1, 0, 0, 0, 0.02, -0.02], [8]),
      },
      seq,
      timestamp: 0,
    });
  const frames = [observation(0, 3), observation(1, 3)];

  let episodeIndex = 0;
  /** One connection playing `episodes` episodes of `steps` observations each. */
  async function play(url) {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    await new Promise((r, j) => {
      ws.once("open", r);
      ws.once("error", j);
    });
    let wake = null;
    const inbox = [];
    ws.on("message", (d) => {
      inbox.push(decodeEnvelope(new Uint8Array(d.buffer, d.byteOffset, d.byteLength)));
      wake?.();
    });
    const reply = async () => {
      while (inbox.length === 0) await new Promise((r) => (wake = r));
      return inbox.shift();
    };
    const send = (type, payload, seq) =>
      ws.send(encodeEnvelope({ type, payload, seq, timestamp: 0 }));
    send("hello", { harness_version: "bench", protocol_version: 1 }, 1);
    await reply();
    const times = [];
    for (let e = 0; e < episodes; e++) {
      // A new scene index each episode: every episode is a new cell of the run.
      const task = { name: "bench", suite: "libero_spatial", episode_idx: episodeIndex++ };
      send("episode_start", { task }, 2);
      for (let s = 0; s < steps; s++) {
        const t0 = performance.now();
        ws.send(frames[s % 2]);
        const r = await reply();
        times.push(performance.now() - t0);
        if (r.type !== "action") throw new Error(`step ${s}: ${r.payload.error}`);
        if (SIM_MS > 0) await sleep(SIM_MS);
      }
      send("episode_end", { metrics: { success: false }, steps, elapsed_sec: 0 }, 4);
    }
    // The last episode's frames are written once its EPISODE_END is read: wait for the close.
    ws.close();
    await new Promise((r) => ws.once("close", r));
    return times;
  }

  async function measure(path) {
    const b = paths[path];
    const before = await stats(b.c);
    const t0 = performance.now();
    const times = await play(b.url);
    const wall = performance.now() - t0;
    // Let the bridge finish the last episode (frames, journal) before its CPU is read.
    await new Promise((r) => setTimeout(r, 200));
    const after = await stats(b.c);
    return {
      wall: wall / episodes,
      cpu: (after.cpu - before.cpu) / episodes,
      frames: (after.frames - before.frames) / episodes,
      p50: pct(times, 0.5),
      p99: pct(times, 0.99),
    };
  }
  const pct = (xs, p) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor(p * s.length))];
  };
  const median = (xs) => pct(xs, 0.5);
  await measure("with"); // warm both paths (JIT, connections)
  await measure("without");
  const rounds = { with: [], without: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const path of r % 2 === 0 ? ["with", "without"] : ["without", "with"])
      rounds[path].push(await measure(path));
  }
  const m = (path, k) => median(rounds[path].map((x) => x[k]));
  console.log(
    `${episodes} episodes x ${steps} steps per round, 2 cameras 256x256 PNG, ${SIM_MS} ms of simulation per step, ${ROUNDS} rounds alternated, medians per episode`,
  );
  for (const path of ["without", "with"])
    console.log(
      `${path.padEnd(7)} keyframes: wall ${m(path, "wall").toFixed(0)} ms, bridge CPU ${m(path, "cpu").toFixed(0)} ms (${(m(path, "cpu") / steps).toFixed(3)} ms/step), frames written ${m(path, "frames")}, step round trip p50 ${m(path, "p50").toFixed(2)} ms p99 ${m(path, "p99").toFixed(2)} ms`,
    );
  const cpuRatio = median(rounds.with.map((x, i) => x.cpu / rounds.without[i].cpu));
  const wallRatio = median(rounds.with.map((x, i) => x.wall / rounds.without[i].wall));
  console.log(
    `keyframes: bridge CPU +${(m("with", "cpu") - m("without", "cpu")).toFixed(0)} ms per episode (ratio ${cpuRatio.toFixed(3)}), wall ratio ${wallRatio.toFixed(3)}`,
  );
  for (const c of [paths.with.c, paths.without.c, upstream.c]) c.kill("SIGKILL");
}
