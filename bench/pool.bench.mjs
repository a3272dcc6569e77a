// Throughput of one run over a pool of 1, 2 and 4 policy servers. Each server is a real
// `provael serve-policy` process (the stub policy over openpi) with `--latency-ms L`: requests
// served one at a time, L ms each, as one accelerator would. One server's capacity is 1000/L
// requests per second whatever the concurrency, so the run's throughput can only grow with the
// number of servers. The run plays at `--concurrency C` per server (C = 2 keeps each server busy
// while the next request is on its way) and the same plan at every pool size; the report is
// checked to be the same bytes at every size. The harness's CPU per step is printed: on a loaded
// machine the harness and the servers' own decoding, not the servers' latency, may be what
// limits the larger pools (pass a longer latency to see past it).
// Run after `npm run build`: node bench/pool.bench.mjs [latency_ms,…] [seeds]
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { resolveAttacks } from "../dist/attacks/index.js";
import { runAttack } from "../dist/runner/run.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const LATENCIES = (process.argv[2] ?? "50").split(",").map(Number);
const seeds = Number(process.argv[3] ?? 12);
const PER_SERVER = 2;
const SIZES = [1, 2, 4];

/** Starts `provael serve-policy` on a free port; resolves with its URL and process. */
function serve(latency) {
  const child = spawn(
    process.execPath,
    [
      join(root, "dist", "cli", "bin.js"),
      "serve-policy",
      "--policy",
      "stub",
      "--protocol",
      "openpi",
      "--port",
      "0",
      "--latency-ms",
      String(latency),
      "--json",
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`serve-policy exited with ${code}`)));
    createInterface({ input: child.stdout }).once("line", (line) =>
      resolve({ url: JSON.parse(line).url, child }),
    );
  });
}

const plan = (s) => ({
  policy: "openpi",
  suite: "stub",
  tasks: ["fetch_cup", "wipe_plate", "grab_sponge"],
  arms: resolveAttacks(["none", "control", "instruction"]),
  seed: 0,
  seeds: s,
  repeats: 1,
  horizon: 4,
  termination: "fixed-horizon",
  scene_pin: 0,
  policy_options: {},
  attack_params: {},
  calibration: {},
});

async function play(urls, s) {
  const out = join(mkdtempSync(join(tmpdir(), "provael-bench-pool-")), "run");
  let first = null;
  let last = null;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const r = await runAttack({
    plan: plan(s),
    out,
    resume: false,
    concurrency: PER_SERVER,
    policyOptions: { url: urls[0] },
    policyUrls: urls,
    commandLine: ["bench"],
    finish: { html: false },
    // Playing time: from the first episode's start to the last one's end (setup and the
    // report's writing excluded, as they do not depend on the pool).
    onProgress: (done) => {
      const now = performance.now();
      if (first === null) first = now;
      if (done > 0) last = now;
    },
  });
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const seconds = (last - first) / 1000;
  const steps = r.report.episodes.reduce((n, e) => n + e.steps, 0);
  const digest = createHash("sha256")
    .update(readFileSync(join(out, "report.json")))
    .digest("hex");
  const cpuMs = (cpu.user + cpu.system) / 1000;
  return { episodes: r.report.episodes.length, steps, seconds, wall, digest, cpuMs };
}

let same = true;
for (const latency of LATENCIES) {
  const servers = await Promise.all(
    Array.from({ length: Math.max(...SIZES) }, () => serve(latency)),
  );
  try {
    const urls = servers.map((s) => s.url);
    // Warm the JIT of the harness and of every server first; it is not what we measure.
    await play(urls, 1);
    const rows = [];
    let base = null;
    for (const n of SIZES) {
      const m = await play(urls.slice(0, n), seeds);
      const rate = m.episodes / m.seconds;
      base ??= rate;
      rows.push({
        servers: n,
        "in flight": n * PER_SERVER,
        episodes: m.episodes,
        steps: m.steps,
        "playing s": m.seconds.toFixed(2),
        "wall s": m.wall.toFixed(2),
        "steps/s": (m.steps / m.seconds).toFixed(1),
        "ideal steps/s": ((n * 1000) / latency).toFixed(0),
        "vs 1 server": `${(rate / base).toFixed(2)}x`,
        "harness CPU ms/step": (m.cpuMs / m.steps).toFixed(2),
        "report sha256": m.digest.slice(0, 16),
      });
    }
    process.stdout.write(
      `\npool of provael serve-policy servers (stub over openpi, --latency-ms ${latency}, one request at a time each), --concurrency ${PER_SERVER} per server\n`,
    );
    console.table(rows);
    if (new Set(rows.map((r) => r["report sha256"])).size !== 1) same = false;
  } finally {
    for (const s of servers) s.child.kill("SIGTERM");
  }
}
process.stdout.write(
  `report bytes ${same ? "identical" : "DIFFERENT"} across pool sizes; goal: >= 1.9x at 2 servers, >= 3.7x at 4\n` +
    `load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores while measuring\n`,
);
if (!same) process.exitCode = 1;
