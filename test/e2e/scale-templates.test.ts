/**
 * The scheduler templates under examples/scale, run as far as this machine allows: their shell
 * commands execute with the scheduler's environment variables set by hand, on the stub pair, and
 * the merged report must equal an unsharded run's.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments, parse as parseYaml } from "yaml";
import { CLI, runCli } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

const DIR = join(import.meta.dirname, "..", "..", "examples", "scale");
const STUB_ARGS = "--policy stub --suite stub --attacks none,instruction --seeds 3";
const PROVAEL = `${process.execPath} ${CLI}`;
const read = (p: string) => readFileSync(p, "utf8");

function unsharded(dir: string): string {
  const out = join(dir, "whole");
  const r = runCli(["attack", ...STUB_ARGS.split(" "), "--out", out]);
  expect(r.code, r.stderr).toBe(0);
  return read(join(out, "report.json"));
}

const sh = (script: string, env: Record<string, string>, cwd: string) =>
  execFileSync("/bin/sh", ["-c", script], {
    cwd,
    env: { ...process.env, ...env },
    encoding: "utf8",
  });

describe("scheduler templates", () => {
  it("Slurm: the array script per task id, then the merge script", () => {
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
    expect(read(join(dir, "results", "merged", "report.json"))).toBe(unsharded(dir));
  });

  it("Kubernetes: the Indexed Job's command per completion index, then the merge Job", () => {
    const dir = tempDir();
    const [shards, merge] = parseAllDocuments(read(join(DIR, "k8s-indexed-job.yaml"))).map((d) =>
      d.toJSON(),
    );
    expect(shards.spec.completionMode).toBe("Indexed");
    const container = shards.spec.template.spec.containers[0];
    const n = Number(container.env.find((e: { name: string }) => e.name === "SHARDS").value);
    expect(shards.spec.completions).toBe(n);
    const results = join(dir, "results");
    const local = (s: string) =>
      s.replaceAll("npx provael", PROVAEL).replaceAll("/results", results);
    for (let k = 0; k < n; k++) {
      sh(
        local(container.args[0]),
        { SHARDS: String(n), PROVAEL_ATTACK_ARGS: STUB_ARGS, JOB_COMPLETION_INDEX: String(k) },
        dir,
      );
    }
    sh(local(merge.spec.template.spec.containers[0].args[0]), {}, dir);
    expect(read(join(results, "merged", "report.json"))).toBe(unsharded(dir));
  });

  it("GitHub Actions: the matrix job's command per shard, then the merge job", () => {
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
        .replace(/--recipe \S+ --policy \S+ --suite \S+ --seeds \d+/, STUB_ARGS)
        // GitHub's own expression syntax, substituted here as the runner would.
        .replaceAll(`\${{ matrix.shard }}`, String(k))
        .replaceAll(`\${{ env.SHARDS }}`, String(shards.length))
        .replace("npx provael", PROVAEL);
      sh(cmd, {}, dir);
    }
    sh(merge.replace("npx provael", PROVAEL), {}, dir);
    expect(read(join(dir, "results", "merged", "report.json"))).toBe(unsharded(dir));
  });
});
