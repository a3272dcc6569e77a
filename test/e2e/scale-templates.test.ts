/**
 * The scheduler templates under examples/scale, run as far as this machine allows without their
 * scheduler: their shell commands execute with the scheduler's environment variables set by hand,
 * on the stub pair, and the merged report must equal an unsharded run's. The Slurm template also
 * runs on a real Slurm (slurm.test.ts); the Kubernetes manifests are checked against the API's
 * schema (k8s-schema.test.ts).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments, parse as parseYaml } from "yaml";
import { CLI, runCli } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

const DIR = join(import.meta.dirname, "..", "..", "examples", "scale");
// No report.html (nor its clip) per shard: the merged report.json is what is compared, and its
// bytes do not depend on it.
const STUB_ARGS = "--policy stub --suite stub --attacks none,instruction --seeds 3 --no-html";
/** A run with no --workers starts one worker thread per core, each loading the whole library:
 * the unsharded run and the matrix job (whose command names none) play in one thread, like the
 * Slurm and Kubernetes shards; the report's bytes do not depend on it. */
const ONE_WORKER = "--workers 1";
const PROVAEL = `${process.execPath} ${CLI}`;
const read = (p: string) => readFileSync(p, "utf8");
const docs = (file: string) => parseAllDocuments(read(join(DIR, file))).map((d) => d.toJSON());

/** The unsharded run of the same plan, played once for the three templates. */
let whole: string | undefined;
function unsharded(): string {
  if (whole === undefined) {
    const out = join(tempDir(), "whole");
    const r = runCli(["attack", ...`${STUB_ARGS} ${ONE_WORKER}`.split(" "), "--out", out]);
    expect(r.code, r.stderr).toBe(0);
    whole = read(join(out, "report.json"));
  }
  return whole;
}

/** Each test plays 3 shards, a merge and at most one unsharded run: about 15 s on 2 quiet cores,
 * several times that under a full suite on a shared machine. */
const TIMEOUT = 300_000;

const sh = (script: string, env: Record<string, string>, cwd: string) =>
  execFileSync("/bin/sh", ["-c", script], {
    cwd,
    env: { ...process.env, ...env },
    encoding: "utf8",
  });

describe("scheduler templates", () => {
  it(
    "Slurm: the array script per task id, then the merge script",
    () => {
      const dir = tempDir();
      const text = read(join(DIR, "slurm-array.sh"));
      expect(text).toMatch(/#SBATCH --array=0-2/);
      const env = { PROVAEL, PROVAEL_ATTACK_ARGS: STUB_ARGS, RESULTS: join(dir, "results") };
      for (const k of [0, 1, 2])
        execFileSync("bash", [join(DIR, "slurm-array.sh")], {
          env: { ...process.env, ...env, SLURM_ARRAY_TASK_ID: String(k) },
          stdio: "pipe",
        });
      // A requeued task resumes its finished shard instead of failing.
      execFileSync("bash", [join(DIR, "slurm-array.sh")], {
        env: { ...process.env, ...env, SLURM_ARRAY_TASK_ID: "1" },
        stdio: "pipe",
      });
      execFileSync("bash", [join(DIR, "slurm-merge.sh")], {
        env: { ...process.env, ...env },
        stdio: "pipe",
      });
      expect(read(join(dir, "results", "merged", "report.json"))).toBe(unsharded());
    },
    TIMEOUT,
  );

  it(
    "Kubernetes: the Indexed Job's command per completion index, a retried pod, then the merge Job",
    () => {
      const dir = tempDir();
      const [shards] = docs("k8s-indexed-job.yaml");
      const [merge] = docs("k8s-merge-job.yaml");
      expect(shards.spec.completionMode).toBe("Indexed");
      const container = shards.spec.template.spec.containers[0];
      const n = Number(container.env.find((e: { name: string }) => e.name === "SHARDS").value);
      expect(shards.spec.completions).toBe(n);
      // WORKERS comes from the pod's CPU request (the Downward API); the test gives it one.
      expect(container.env.find((e: { name: string }) => e.name === "WORKERS").valueFrom).toEqual({
        resourceFieldRef: { containerName: "shard", resource: "requests.cpu" },
      });
      const results = join(dir, "results");
      const local = (s: string) =>
        s.replaceAll("npx provael", PROVAEL).replaceAll("/results", results);
      // The variables Kubernetes sets in an Indexed Job's pod (and the env the manifest declares).
      const shard = (k: number) =>
        sh(
          local(container.args[0]),
          {
            SHARDS: String(n),
            PROVAEL_ATTACK_ARGS: STUB_ARGS,
            WORKERS: "1",
            JOB_COMPLETION_INDEX: String(k),
          },
          dir,
        );
      const mergeCommand = local(merge.spec.template.spec.containers[0].args[0]);
      for (let k = 0; k < n; k++) shard(k);
      // A pod killed mid-shard leaves a journal prefix, its last line possibly torn; the retried
      // pod (same index) must resume it, not refuse the directory or start over.
      const one = join(results, "shard-1");
      const lines = read(join(one, "journal.jsonl")).split("\n");
      for (const f of readdirSync(one)) rmSync(join(one, f), { recursive: true, force: true });
      writeFileSync(
        join(one, "journal.jsonl"),
        `${lines.slice(0, 4).join("\n")}\n${lines[4]?.slice(0, 20)}`,
      );
      // The merge Job applied before the Indexed Job is complete refuses and writes no report.
      expect(() =>
        execFileSync("/bin/sh", ["-c", mergeCommand], { cwd: dir, stdio: "pipe" }),
      ).toThrow(/shard/);
      expect(existsSync(join(results, "merged", "report.json"))).toBe(false);
      shard(1);
      expect(JSON.parse(read(join(one, "execution-manifest.json"))).resumed).toBe(true);
      sh(mergeCommand, {}, dir);
      expect(read(join(results, "merged", "report.json"))).toBe(unsharded());
    },
    TIMEOUT,
  );

  it(
    "GitHub Actions: the matrix job's command per shard, then the merge job",
    () => {
      const dir = tempDir();
      const wf = parseYaml(read(join(DIR, "github-actions-matrix.yml")));
      const shards: number[] = wf.jobs.shard.strategy.matrix.shard;
      expect(shards.length).toBe(wf.jobs.shard.env.SHARDS);
      expect(wf.jobs.merge.needs).toBe("shard");
      const attack: string = wf.jobs.shard.steps.find((s: { run?: string }) =>
        s.run?.includes("provael attack"),
      ).run;
      const merge: string = wf.jobs.merge.steps.find((s: { run?: string }) =>
        s.run?.includes("provael merge"),
      ).run;
      for (const k of shards) {
        const cmd = attack
          .replace(
            /--recipe \S+ --policy \S+ --suite \S+ --seeds \d+/,
            `${STUB_ARGS} ${ONE_WORKER}`,
          )
          // GitHub's own expression syntax, substituted here as the runner would.
          .replaceAll(`\${{ matrix.shard }}`, String(k))
          .replaceAll(`\${{ env.SHARDS }}`, String(shards.length))
          .replace("npx provael", PROVAEL);
        sh(cmd, {}, dir);
      }
      sh(merge.replace("npx provael", PROVAEL), {}, dir);
      expect(read(join(dir, "results", "merged", "report.json"))).toBe(unsharded());
    },
    TIMEOUT,
  );
});
