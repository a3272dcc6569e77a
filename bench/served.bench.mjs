// Harness throughput against a served policy, as a fraction of the server's capacity.
// A test server (a child process, so it does not share the harness's CPU) serves the stub policy
// over openpi with a fixed latency per request and at most C requests in service at once: its
// capacity is C / latency requests per second. The harness plays the stub suite through the real
// runner (runAttack) at concurrency 1, C and 2C.
// Run after `npx tsc -p tsconfig.build.json`: node bench/served.bench.mjs [C] [latency_ms]
import { fork } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveAttacks } from "../dist/attacks/index.js";
import { startPolicyServer } from "../dist/policies/served/server/index.js";
import { stubPolicy } from "../dist/policies/stub.js";
import { runAttack } from "../dist/runner/run.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The stub policy behind a gate: at most `capacity` acts in service, each `latency` ms long. */
function gated(capacity, latency) {
  let busy = 0;
  const waiting = [];
  const acquire = () => {
    if (busy >= capacity) return new Promise((r) => waiting.push(r));
    busy++;
    return Promise.resolve();
  };
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else busy--;
  };
  return {
    ...stubPolicy,
    load: async (o) => {
      const inst = await stubPolicy.load(o);
      return {
        capabilities: inst.capabilities,
        reset: (e) => inst.reset(e),
        act: async (obs) => {
          await acquire();
          try {
            await sleep(latency);
            return inst.act(obs);
          } finally {
            release();
          }
        },
        close: () => inst.close(),
      };
    },
  };
}

if (process.argv[2] === "--server") {
  const [capacity, latency] = process.argv.slice(3).map(Number);
  const server = await startPolicyServer({
    policy: gated(capacity, latency),
    protocol: "openpi",
    host: "127.0.0.1",
    port: 0,
  });
  process.send?.({ url: server.url });
  process.on("message", async () => {
    await server.close();
    process.exit(0);
  });
} else {
  const capacity = Number(process.argv[2] ?? 8);
  const latency = Number(process.argv[3] ?? 50);
  const child = fork(new URL(import.meta.url).pathname, [
    "--server",
    String(capacity),
    String(latency),
  ]);
  const { url } = await new Promise((r) => child.once("message", r));
  const ideal = capacity / (latency / 1000);

  const plan = (seeds) => ({
    policy: "openpi",
    suite: "stub",
    tasks: ["fetch_cup", "wipe_plate", "grab_sponge"],
    arms: resolveAttacks(["none", "control", "instruction"]),
    seed: 0,
    seeds,
    repeats: 1,
    horizon: 20,
    termination: "fixed-horizon",
    scene_pin: 0,
    policy_options: { url },
    attack_params: {},
    calibration: {},
  });

  // Warm both processes' JIT first; it is not what we measure.
  await runAttack({
    plan: { ...plan(1), tasks: ["fetch_cup"] },
    out: join(mkdtempSync(join(tmpdir(), "provael-bench-")), "run"),
    resume: false,
    concurrency: capacity,
    policyOptions: { url },
    commandLine: ["bench"],
    finish: { html: false },
  });
  const rows = [];
  for (const concurrency of [1, capacity, 2 * capacity]) {
    // About 6 s of work at capacity; concurrency 1 gets a smaller plan (one request at a time).
    const p =
      concurrency === 1
        ? { ...plan(1), tasks: ["fetch_cup"], arms: ["none", "goal_substitution"] }
        : plan(Math.max(1, Math.round((ideal * 6) / (27 * 20))));
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const r = await runAttack({
      plan: p,
      out: join(mkdtempSync(join(tmpdir(), "provael-bench-")), "run"),
      resume: false,
      concurrency,
      policyOptions: { url },
      commandLine: ["bench"],
      finish: { html: false },
    });
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const steps = r.report.episodes.reduce((s, e) => s + e.steps, 0);
    const rate = steps / seconds;
    rows.push({
      concurrency,
      episodes: r.report.episodes.length,
      requests: steps,
      seconds: seconds.toFixed(2),
      "req/s": rate.toFixed(1),
      "of C/latency": (rate / ideal).toFixed(3),
      "of min(N,C)/latency": (rate / (Math.min(concurrency, capacity) / (latency / 1000))).toFixed(
        3,
      ),
      "harness CPU ms/req": ((cpu.user + cpu.system) / 1000 / steps).toFixed(2),
    });
  }
  process.stdout.write(
    `served openpi stub, capacity C=${capacity} concurrent requests, latency ${latency} ms: C/latency = ${ideal.toFixed(0)} req/s\n`,
  );
  console.table(rows);
  const [load1] = (await import("node:os")).loadavg();
  process.stdout.write(
    `load average ${load1.toFixed(1)} on ${(await import("node:os")).availableParallelism()} cores while measuring; one free core drives about ${(1000 / Number(rows[2]["harness CPU ms/req"])).toFixed(0)} req/s at the measured CPU cost\n`,
  );
  child.send("stop");
}
