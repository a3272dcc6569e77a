/**
 * examples/scale/slurm-array.sh on a real Slurm: a single-node cluster of the test's own runs the
 * array and the merge job submitted with the commands docs/scale.md gives, and the merged report
 * must equal an unsharded run's byte for byte; then one task is killed mid-shard and requeued with
 * the docs' recovery commands, resumes its shard, and the merged bytes are the same again.
 * A machine whose Slurm daemons cannot start skips these tests and says why; `.ci/run` sets
 * PROVAEL_TEST_SLURM=required, so there a cluster that does not start fails instead.
 */
import { execFile, execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { CLI } from "../support/cli.js";
import { type Cluster, startCluster } from "../support/slurm.js";
import { tempDir } from "../support/tmp.js";

const ROOT = join(import.meta.dirname, "..", "..");
/** Small, but long enough per shard (a few seconds) for a task to be caught mid-shard. */
// No report.html (nor its clip) per shard: the merged report.json is what is compared, and its
// bytes do not depend on it.
const STUB_ARGS = "--policy stub --suite stub --attacks none,instruction --seeds 30 --no-html";
const SHARDS = 3;
const execFileAsync = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The lines of the docs' ```sh block that contains `marker`, without comments and exports. */
function docsCommands(marker: string): string {
  const docs = readFileSync(join(ROOT, "docs", "scale.md"), "utf8");
  const block = [...docs.matchAll(/```sh\n([\s\S]*?)```/g)]
    .map((m) => m[1] ?? "")
    .find((b) => b.includes(marker));
  if (!block) throw new Error(`docs/scale.md has no sh block with ${marker}`);
  return block
    .split("\n")
    .map((l) => l.replace(/\s+#.*$/, ""))
    .filter((l) => l.trim() && !l.startsWith("#") && !l.startsWith("export "))
    .join("\n");
}

const dir = tempDir("provael-slurm-");
const started = await startCluster(tempDir("provael-slurm-cluster-"));
const cluster: Cluster | null = "unavailable" in started ? null : started;
if ("unavailable" in started) {
  if (process.env.PROVAEL_TEST_SLURM === "required")
    throw new Error(`the test Slurm cluster did not start: ${started.unavailable}`);
  console.warn(`Slurm tests skipped: ${started.unavailable}`);
}

/** A working directory as a user would have it: the project's examples/ and a results folder. */
function workdir(name: string): { cwd: string; results: string; env: NodeJS.ProcessEnv } {
  const cwd = join(dir, name);
  mkdirSync(cwd, { recursive: true });
  symlinkSync(join(ROOT, "examples"), join(cwd, "examples"));
  const results = join(cwd, "results");
  const env = {
    ...cluster?.env,
    SHARDS: String(SHARDS),
    // One CPU a task: the test node may have only two.
    CPUS: "1",
    MEM: "256M",
    RESULTS: results,
    PROVAEL: `${process.execPath} ${CLI}`,
    PROVAEL_ATTACK_ARGS: STUB_ARGS,
  };
  return { cwd, results, env };
}

/** Runs docs commands in bash and returns the variables they set. */
function bash(script: string, cwd: string, env: NodeJS.ProcessEnv): string {
  return execFileSync("bash", ["-euc", script], { cwd, env, encoding: "utf8" }).trim();
}

function jobState(job: string, env: NodeJS.ProcessEnv): string {
  const r = spawnSync("scontrol", ["show", "job", job], { env, encoding: "utf8" });
  return r.stdout.match(/JobState=(\S+)/)?.[1] ?? `unknown (${r.stderr.trim()})`;
}

/** Polls until `job` has left the queue (bounded), then returns its final state. */
async function waitForJob(job: string, env: NodeJS.ProcessEnv, limitMs: number): Promise<string> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    const q = spawnSync("squeue", ["-h", "-j", job, "-o", "%T %r"], { env, encoding: "utf8" });
    if (q.status === 0 && q.stdout.trim() === "") return jobState(job, env);
    if (q.stdout.includes("DependencyNeverSatisfied"))
      throw new Error(`job ${job} can never start: ${q.stdout.trim()}`);
    await sleep(250);
  }
  const queue = spawnSync("squeue", [], { env, encoding: "utf8" }).stdout;
  throw new Error(`job ${job} still queued after ${limitMs / 1000} s:\n${queue}`);
}

/** The unsharded run of the same plan, played while the cluster works (started on first use). */
let unshardedRun: Promise<string> | undefined;
function unsharded(): Promise<string> {
  unshardedRun ??= (async () => {
    const out = join(dir, "whole");
    await execFileAsync(process.execPath, [CLI, "attack", ...STUB_ARGS.split(" "), "--out", out]);
    return readFileSync(join(out, "report.json"), "utf8");
  })();
  return unshardedRun;
}

function submit(w: ReturnType<typeof workdir>): { jid: string; mid: string } {
  const [jid = "", mid = ""] = bash(
    `${docsCommands("sbatch --parsable")}\necho "$jid $mid"`,
    w.cwd,
    w.env,
  ).split(" ");
  expect(jid).toMatch(/^\d+$/);
  expect(mid).toMatch(/^\d+$/);
  return { jid, mid };
}

const resumed = (shard: string) =>
  JSON.parse(readFileSync(join(shard, "execution-manifest.json"), "utf8")).resumed;

describe.skipIf(cluster === null)("Slurm: the array template on a single-node cluster", () => {
  afterAll(async () => {
    await cluster?.stop();
  });

  it("the array and the dependent merge job write the unsharded report's bytes", async () => {
    const w = workdir("clean");
    const { jid, mid } = submit(w);
    const whole = unsharded();
    expect(await waitForJob(mid, w.env, 240_000)).toBe("COMPLETED");
    for (let k = 0; k < SHARDS; k++) expect(jobState(`${jid}_${k}`, w.env)).toBe("COMPLETED");
    expect(readFileSync(join(w.results, "merged", "report.json"), "utf8")).toBe(await whole);
  }, 300_000);

  it("a task killed mid-shard and requeued resumes its shard; the merge is unchanged", async () => {
    const w = workdir("fault");
    const { jid, mid } = submit(w);
    const shard = join(w.results, "shard-1");
    const journal = join(shard, "journal.jsonl");
    // Kill task 1 once its journal holds episodes.
    const deadline = Date.now() + 120_000;
    const lines = () =>
      existsSync(journal) ? readFileSync(journal, "utf8").split("\n").length - 1 : 0;
    while (lines() < 3) {
      if (Date.now() > deadline) throw new Error("task 1 wrote no episodes in 120 s");
      await sleep(50);
    }
    execFileSync("scancel", ["--signal=KILL", `${jid}_1`], { env: w.env });
    expect(await waitForJob(`${jid}_1`, w.env, 60_000)).toBe("CANCELLED");
    // Mid-shard: some episodes on disk, the shard unfinished.
    expect(lines()).toBeGreaterThan(1);
    expect(existsSync(join(shard, "report.json"))).toBe(false);
    bash(docsCommands("scontrol requeue"), w.cwd, { ...w.env, jid, mid, k: "1" });
    expect(await waitForJob(mid, w.env, 240_000)).toBe("COMPLETED");
    expect(jobState(`${jid}_1`, w.env)).toBe("COMPLETED");
    expect(resumed(shard)).toBe(true);
    expect(resumed(join(w.results, "shard-0"))).toBe(false);
    expect(readFileSync(join(w.results, "merged", "report.json"), "utf8")).toBe(await unsharded());
  }, 300_000);
});
