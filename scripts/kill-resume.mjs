#!/usr/bin/env node
/**
 * SIGKILL a stub run at seeded random points, then `--resume` it, and check that it ends as the
 * uninterrupted run did: every output present, the same bytes (report.json, report.md,
 * report.html, trajectories.jsonl), the same exit code, no temporary file left, the manifest
 * (the commit point) naming every output. Half the trials kill at a random moment of the run,
 * half inside the final-write window (PROVAEL_FAULT_KILL: just before one output is renamed into
 * place). Every trial runs under a failing --protocol (exit 1) or none (exit 0), alternately.
 * Uses the built CLI (npm run build first).
 *
 *   node scripts/kill-resume.mjs [trials, default 20] [seed, default 16]
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = join(root, "dist", "cli", "bin.js");
const trials = Number(process.argv[2] ?? 20);
const seed = Number(process.argv[3] ?? 16);
const work = mkdtempSync(join(tmpdir(), "provael-kill-resume-"));

/** mulberry32: a seeded generator, so a trial's kill point replays. */
function rng(s) {
  let a = s >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = rng(seed);

const RUN = [
  "attack",
  "--policy",
  "stub",
  "--suite",
  "stub",
  "--attacks",
  "none,control,instruction",
  "--seeds",
  "6",
];
const protocol = join(work, "strict.json");
writeFileSync(
  protocol,
  JSON.stringify({ name: "strict", criteria: { max_unsafe_rate: { overall: { max: 0 } } } }),
);
const CONFIGS = [
  { name: "failing --protocol", args: ["--protocol", protocol] },
  { name: "no protocol", args: [] },
];
const OUTPUTS = ["report.json", "report.md", "report.html", "trajectories.jsonl"];
const FINAL_WRITES = [
  "trajectories.jsonl",
  "report.md",
  "report.json",
  "report.html",
  "execution-manifest.json",
];
const env = { ...process.env };

const cli = (args, extra = {}) =>
  spawnSync(process.execPath, [bin, ...args], { env: { ...env, ...extra }, encoding: "utf8" });

/** Starts a run and kills it after `ms`; resolves with how it ended. */
function killAfter(args, ms) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env, stdio: "ignore" });
    const timer = setTimeout(() => child.kill("SIGKILL"), ms);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

// The uninterrupted runs: their outputs, exit codes and wall times.
const reference = CONFIGS.map((c, i) => {
  const out = join(work, `whole-${i}`);
  const t0 = performance.now();
  const r = cli([...RUN, ...c.args, "--out", out]);
  return { ...c, out, code: r.status, ms: performance.now() - t0 };
});

const results = [];
for (let t = 0; t < trials; t++) {
  const ref = reference[t % CONFIGS.length];
  const out = join(work, `trial-${t}`);
  const args = [...RUN, ...ref.args, "--out", out];
  let how;
  let killed;
  if (t % 4 < 2) {
    const ms = Math.round(100 + random() * ref.ms);
    how = `SIGKILL after ${ms} ms`;
    killed = await killAfter(args, ms);
  } else {
    const file = FINAL_WRITES[Math.floor(random() * FINAL_WRITES.length)];
    how = `SIGKILL before ${file} lands`;
    const r = cli(args, { PROVAEL_FAULT_KILL: file });
    killed = { code: r.status, signal: r.signal };
  }
  // A kill that came after the run finished leaves nothing to resume; --resume must still agree.
  const resumed = existsSync(out) ? cli([...args, "--resume"]) : cli(args);
  const problems = [];
  if (resumed.status !== ref.code)
    problems.push(
      `exit ${resumed.status}, uninterrupted ${ref.code}: ${resumed.stderr.slice(-300)}`,
    );
  for (const f of OUTPUTS) {
    if (!existsSync(join(out, f))) problems.push(`${f} missing`);
    else if (!readFileSync(join(out, f)).equals(readFileSync(join(ref.out, f))))
      problems.push(`${f} differs`);
  }
  const manifestPath = join(out, "execution-manifest.json");
  if (!existsSync(manifestPath)) problems.push("no manifest");
  else {
    const m = JSON.parse(readFileSync(manifestPath, "utf8"));
    for (const f of OUTPUTS) if (!m.outputs?.[f]) problems.push(`manifest names no ${f}`);
    if (ref.args.length > 0 && m.verdict !== "fail") problems.push(`manifest verdict ${m.verdict}`);
  }
  const temps = existsSync(out) ? readdirSync(out).filter((f) => /\.tmp-\d+$/.test(f)) : [];
  if (temps.length > 0) problems.push(`temporary files left: ${temps.join(", ")}`);
  results.push({
    trial: t,
    config: ref.name,
    how,
    killed: killed.signal ?? `exit ${killed.code}`,
    exit: resumed.status,
    ok: problems.length === 0,
    problems,
  });
}

const killedCount = results.filter((r) => r.killed === "SIGKILL").length;
const ok = results.filter((r) => r.ok).length;
for (const r of results)
  console.log(
    `${r.ok ? "ok  " : "FAIL"} #${r.trial} ${r.config}: ${r.how} (${r.killed}) -> resume exit ${r.exit}${r.ok ? "" : `: ${r.problems.join("; ")}`}`,
  );
console.log(
  JSON.stringify({
    seed,
    trials,
    killed_by_sigkill: killedCount,
    finished_before_the_kill: trials - killedCount,
    identical_after_resume: ok,
    uninterrupted_exit_codes: Object.fromEntries(reference.map((r) => [r.name, r.code])),
  }),
);
process.exit(ok === trials ? 0 : 1);
