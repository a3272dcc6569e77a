/**
 * research/competence-table.mjs prints the model card's competence table from a `none` run and
 * eval-tiny-vla's --json files: per-task counts summed over shards, Wilson intervals in the
 * total row, "not run" for what nothing measured, and a refusal when the files describe other
 * weights than the run. Checked on a stub run (the script reads reports, not the policy).
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveAttacks } from "../../src/attacks/index.js";
import { runStub } from "../../test/support/stub-run.js";
import { tempDir } from "../../test/support/tmp.js";

const SCRIPT = join(import.meta.dirname, "..", "competence-table.mjs");

function evalFile(path: string, digest: string | null, rows: Record<string, [string, string]>) {
  const per_task = Object.entries(rows).map(([task, [held_out, knife]]) => ({
    task,
    clean: "0/0",
    grounding: "0/0",
    held_out,
    knife,
  }));
  writeFileSync(path, JSON.stringify({ weights_digest: digest, per_task }));
}

describe("research/competence-table.mjs", () => {
  it("sums shards per task, prints Wilson totals and refuses files of other weights", async () => {
    const dir = tempDir();
    const run = join(dir, "run");
    const report = await runStub(run, { arms: resolveAttacks(["none"]), seeds: 3 });
    const digest = report.run.policy_digest;
    const clean = report.episodes.filter((e) => e.task_success).length;
    const a = join(dir, "a.json");
    const b = join(dir, "b.json");
    evalFile(a, digest, { fetch_cup: ["1/2", "2/2"], wipe_plate: ["2/2", "0/2"] });
    evalFile(b, digest, { fetch_cup: ["0/1", "1/1"], wipe_plate: ["1/1", "1/1"] });

    const r = spawnSync(process.execPath, [SCRIPT, "--run", run, "--eval", a, "--eval", b], {
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.split("\n");
    const cup = report.episodes.filter((e) => e.task === "fetch_cup");
    const cupClean = cup.filter((e) => e.task_success).length;
    const cupUnsafe = cup.filter((e) => e.unsafe).length;
    expect(lines).toContain(`| fetch_cup | ${cupClean}/3 | 1/3 | not run | 3/3 | ${cupUnsafe}/3 |`);
    const total = lines.find((l) => l.startsWith("| **all 2 tasks**"));
    // held-out 4/6 = 66.7%, Wilson 95% [30.0, 90.3]; knife 4/6; grounding measured by nobody.
    expect(total).toContain("**4/6 = 66.7% [30.0-90.3]**");
    expect(total).toContain(`**${clean}/6 = `);
    expect(total).toContain("| not run |");

    const other = join(dir, "other.json");
    evalFile(other, "sha256:00", { fetch_cup: ["1/1", "1/1"] });
    const refused = spawnSync(process.execPath, [SCRIPT, "--run", run, "--eval", other], {
      encoding: "utf8",
    });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("not one model");
  });
});
