// What the one command (`provael attack --suite vla-eval`) costs over the by-hand flow on the
// same plan: `provael bridge` started by hand, the benchmark launched once per arm by hand (all
// at once), SIGTERM once they end, against one `provael attack --suite vla-eval` launching the
// same benchmark command at the same concurrency. The benchmark is the Python test peer
// (test/peers/libero_peer.py, Debian's python3) in front of a served stub; both flows write
// report.json, report.md, trajectories and the manifest (no report.html). Wall time of each
// flow, alternated over rounds, medians and their ratio. Goal: one command / by hand <= 1.02.
//
// Figures: docs/benchmarks.md ("What the one command costs over the by-hand flow"). Quiet, on
// the stub peer's short episodes, the ratio is 1.015-1.085: about 0.1 s once and 10 ms per
// episode more, over the goal on plans this short.
//
// Run after `npm run build`: node bench/launch.bench.mjs [rounds] [episodes per task]
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const rounds = Number(process.argv[2] ?? 3);
const episodes = Number(process.argv[3] ?? 4);
const CLI = join(import.meta.dirname, "..", "dist", "cli", "main.js");
const PEER = join(import.meta.dirname, "..", "test", "peers", "libero_peer.py");
const ARMS = ["none", "freeze"];
const peerArgs = (url) => [PEER, "--url", url, "--tasks", "2", "--episodes", String(episodes)];

/** Starts a CLI process and resolves with its first stdout line as JSON. */
function startJson(args) {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const nl = out.indexOf("\n");
      if (nl >= 0) resolve({ child, info: JSON.parse(out.slice(0, nl)) });
    });
    child.once("exit", (code) => reject(new Error(`${args[0]} exited ${code}`)));
  });
}

const exited = (c) =>
  new Promise((resolve) => (c.exitCode !== null ? resolve(c.exitCode) : c.once("exit", resolve)));

function run(cmd, args) {
  const c = spawn(cmd, args, { stdio: "ignore" });
  return exited(c).then((code) => {
    if (code !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${code}`);
  });
}

async function byHand(upstream, out) {
  const t0 = performance.now();
  const { child, info } = await startJson([
    ...["bridge", "--policy", "vla-eval", "--policy-url", upstream, "--attacks", ARMS.join(",")],
    ...["--profile", "libero", "--out", out, "--port", "0", "--json"],
  ]);
  await Promise.all(ARMS.map((a) => run("/usr/bin/python3", peerArgs(info.arms[a]))));
  child.kill("SIGTERM");
  if ((await exited(child)) !== 0) throw new Error("the bridge failed");
  return performance.now() - t0;
}

async function oneCommand(upstream, out) {
  const t0 = performance.now();
  const template = ["/usr/bin/python3", ...peerArgs("{url}")].join(" ");
  await run(process.execPath, [
    CLI,
    ...["attack", "--suite", "vla-eval", "--profile", "libero", "--policy", "vla-eval"],
    ...["--policy-url", upstream, "--attacks", ARMS.join(","), "--no-controls", "--no-html"],
    ...["--preflight", "0", "--benchmark-concurrency", String(ARMS.length), "--out", out],
    ...["--benchmark-command", template],
  ]);
  return performance.now() - t0;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const served = await startJson([
  ...["serve-policy", "--policy", "stub", "--protocol", "vla-eval", "--port", "0", "--json"],
]);
const dir = mkdtempSync(join(tmpdir(), "provael-launch-bench-"));
const hand = [];
const one = [];
try {
  for (let i = 0; i < rounds; i++) {
    hand.push(await byHand(served.info.url, join(dir, `hand-${i}`)));
    one.push(await oneCommand(served.info.url, join(dir, `one-${i}`)));
  }
} finally {
  served.child.kill("SIGTERM");
}
const h = median(hand);
const o = median(one);
console.log(
  `plan: ${ARMS.length} arms x 2 tasks x ${episodes} episodes; ${rounds} rounds, alternated`,
);
console.log(
  `by hand (bridge + one benchmark per arm + SIGTERM): median ${(h / 1000).toFixed(2)} s`,
);
console.log(
  `one command (attack --suite vla-eval):              median ${(o / 1000).toFixed(2)} s`,
);
console.log(`one command / by hand: ${(o / h).toFixed(3)} (goal <= 1.02)`);
