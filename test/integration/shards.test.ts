import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RUN_FILES } from "../../src/rundir/files.js";
import { lineSum } from "../../src/rundir/journal.js";
import { LOCK_FILE } from "../../src/rundir/lock.js";
import { mergeRuns } from "../../src/runner/merge.js";
import type { PlanSpec } from "../../src/runner/plan.js";
import { runAttack } from "../../src/runner/run.js";
import { stubPlan } from "../support/stub-run.js";
import { tempDir } from "../support/tmp.js";

const plan: PlanSpec = stubPlan({ tasks: ["fetch_cup", "wipe_plate", "grab_sponge"] });

const run = (out: string, extra: Partial<Parameters<typeof runAttack>[0]> = {}) =>
  runAttack({
    plan,
    out,
    resume: false,
    concurrency: 1,
    policyOptions: {},
    commandLine: [],
    finish: { html: false },
    ...extra,
  });
const bytes = (dir: string, f = "report.json") => readFileSync(join(dir, f), "utf8");

describe("shards and merge", () => {
  it("three shards merged give the unsharded report, byte for byte", async () => {
    const dir = tempDir();
    await run(join(dir, "whole"));
    for (let k = 0; k < 3; k++) {
      const r = await run(join(dir, `s${k}`), { shard: { index: k, count: 3 } });
      expect(r.report?.run.shard).toBe(`${k}/3`);
    }
    const m = await mergeRuns(
      [0, 1, 2].map((k) => join(dir, `s${k}`)),
      join(dir, "merged"),
      { commandLine: [] },
    );
    expect(m.cells).toBe(plan.tasks.length * plan.arms.length * plan.seeds);
    expect(bytes(join(dir, "merged"))).toBe(bytes(join(dir, "whole")));
    expect(bytes(join(dir, "merged"), "trajectories.jsonl")).toBe(
      bytes(join(dir, "whole"), "trajectories.jsonl"),
    );
    const manifest = JSON.parse(bytes(join(dir, "merged"), "execution-manifest.json"));
    expect(manifest.merged_from).toHaveLength(3);
    // Merging again is a no-op; an identical duplicate shard is tolerated.
    expect(
      (
        await mergeRuns([join(dir, "s0"), join(dir, "s1"), join(dir, "s2")], join(dir, "merged"), {
          commandLine: [],
        })
      ).alreadyComplete,
    ).toBe(true);
    const dup = await mergeRuns(
      [join(dir, "s0"), join(dir, "s0"), join(dir, "s1"), join(dir, "s2")],
      join(dir, "m2"),
      { commandLine: [] },
    );
    // Shard 0 of 3 holds every third cell of the plan.
    expect(dup.duplicates).toBe(Math.ceil((plan.tasks.length * plan.arms.length * plan.seeds) / 3));
    expect(bytes(join(dir, "m2"))).toBe(bytes(join(dir, "whole")));
  });

  it("names missing cells, conflicting duplicates and plan differences", async () => {
    const dir = tempDir();
    await run(join(dir, "s0"), { shard: { index: 0, count: 2 } });
    await run(join(dir, "s1"), { shard: { index: 1, count: 2 } });
    await expect(mergeRuns([join(dir, "s0")], join(dir, "m"), { commandLine: [] })).rejects.toThrow(
      /cell\(s\) missing from the shards: c[0-9a-f]+ \(fetch_cup\/none\/seed 1\)/,
    );
    await runAttack({
      plan: { ...plan, seeds: 6 },
      out: join(dir, "other"),
      resume: false,
      concurrency: 1,
      policyOptions: {},
      commandLine: [],
      finish: { html: false },
      shard: { index: 1, count: 2 },
    });
    await expect(
      mergeRuns([join(dir, "s0"), join(dir, "other")], join(dir, "m"), { commandLine: [] }),
    ).rejects.toThrow(/another plan .*seeds: 5 vs 6/);
    // A tampered line fails its checksum, naming it.
    const copy = join(dir, "copy");
    mkdirSync(copy);
    const lines = bytes(join(dir, "s0"), RUN_FILES.journal).split("\n");
    const original = lines[1] as string;
    lines[1] = original.replace('"unsafe_steps":0', '"unsafe_steps":7');
    writeFileSync(join(copy, RUN_FILES.journal), lines.join("\n"));
    for (const f of ["report.json", "report.md", "trajectories.jsonl", "execution-manifest.json"])
      writeFileSync(join(copy, f), bytes(join(dir, "s0"), f));
    await expect(
      mergeRuns([join(dir, "s0"), copy, join(dir, "s1")], join(dir, "m"), { commandLine: [] }),
    ).rejects.toThrow(/line 2 fails its checksum/);
    // A well-formed duplicate with another result (a nondeterministic shard) conflicts.
    const { sum: _, ...content } = JSON.parse(original) as { sum: string; record: object };
    const changed = { ...content, record: { ...content.record, unsafe_steps: 7 } };
    lines[1] = JSON.stringify({ ...changed, sum: lineSum(changed) });
    writeFileSync(join(copy, RUN_FILES.journal), lines.join("\n"));
    await expect(
      mergeRuns([join(dir, "s0"), copy, join(dir, "s1")], join(dir, "m"), { commandLine: [] }),
    ).rejects.toThrow(/conflicting results/);
    expect(existsSync(join(dir, "m"))).toBe(false);
  });

  it("recovers from a merge killed halfway and from a shard killed halfway", async () => {
    const dir = tempDir();
    await run(join(dir, "whole"));
    await run(join(dir, "s0"), { shard: { index: 0, count: 2 } });
    // A shard stopped halfway is refused by merge, then finished with resume.
    await run(join(dir, "s1"), { shard: { index: 1, count: 2 }, maxEpisodes: 20 });
    await expect(
      mergeRuns([join(dir, "s0"), join(dir, "s1")], join(dir, "m"), { commandLine: [] }),
    ).rejects.toThrow(/unfinished shard/);
    await run(join(dir, "s1"), { shard: { index: 1, count: 2 }, resume: true });
    // What a merge killed halfway leaves: a temporary directory with partial files.
    mkdirSync(join(dir, "m.merge-tmp"));
    writeFileSync(join(dir, "m.merge-tmp", RUN_FILES.journal), '{"type":"header"');
    await mergeRuns([join(dir, "s0"), join(dir, "s1")], join(dir, "m"), { commandLine: [] });
    expect(bytes(join(dir, "m"))).toBe(bytes(join(dir, "whole")));
    expect(existsSync(join(dir, "m.merge-tmp"))).toBe(false);
    expect(existsSync(join(dir, "m", LOCK_FILE))).toBe(false);
    // Resuming a shard directory with another --shard is refused.
    await expect(
      run(join(dir, "s1"), { shard: { index: 0, count: 2 }, resume: true }),
    ).rejects.toThrow(/holds shard 1\/2, not 0\/2/);
  });

  it("lets one merge at a time write an --out, and never deletes what another put there", async () => {
    const dir = tempDir();
    await run(join(dir, "s0"), { shard: { index: 0, count: 2 } });
    await run(join(dir, "s1"), { shard: { index: 1, count: 2 } });
    const ins = [join(dir, "s0"), join(dir, "s1")];
    // A merge into the same --out that is still running (this very process holds its lock).
    const tmp = join(dir, "m.merge-tmp");
    mkdirSync(tmp);
    const holder = { pid: process.pid, host: hostname(), what: "provael merge" };
    writeFileSync(join(tmp, LOCK_FILE), JSON.stringify(holder));
    writeFileSync(join(tmp, RUN_FILES.journal), "its half-written journal");
    await expect(mergeRuns(ins, join(dir, "m"), { commandLine: [] })).rejects.toThrow(
      `${tmp} is in use by provael merge (process ${process.pid} on ${hostname()})`,
    );
    expect(bytes(tmp, RUN_FILES.journal)).toBe("its half-written journal");
    expect(existsSync(join(dir, "m"))).toBe(false);
    // A run playing into --out holds it too: the merge is refused before it builds anything.
    mkdirSync(join(dir, "n"));
    writeFileSync(join(dir, "n", LOCK_FILE), JSON.stringify({ ...holder, what: "provael attack" }));
    await expect(mergeRuns(ins, join(dir, "n"), { commandLine: [] })).rejects.toThrow(
      /n already exists and is not this plan's merged run/,
    );
    expect(existsSync(join(dir, "n.merge-tmp"))).toBe(false);
  });

  it("refuses to resume a shard whose journal holds another shard's lines, naming the cells", async () => {
    const dir = tempDir();
    await run(join(dir, "s0"), { shard: { index: 0, count: 2 }, maxEpisodes: 5 });
    await run(join(dir, "s1"), { shard: { index: 1, count: 2 }, maxEpisodes: 5 });
    // A well-formed line (valid checksum) of shard 1's, appended to shard 0's journal.
    const foreign = bytes(join(dir, "s1"), RUN_FILES.journal).split("\n")[1] as string;
    const cell = (JSON.parse(foreign) as { record: { cell: string } }).record.cell;
    writeFileSync(
      join(dir, "s0", RUN_FILES.journal),
      `${bytes(join(dir, "s0"), RUN_FILES.journal)}${foreign}\n`,
    );
    await expect(
      run(join(dir, "s0"), { shard: { index: 0, count: 2 }, resume: true }),
    ).rejects.toThrow(
      new RegExp(`1 episode\\(s\\) for cells outside shard 0/2 of the plan: ${cell}`),
    );
  });

  it("gives the same report with worker threads as in one thread", async () => {
    const dir = tempDir();
    await run(join(dir, "one"));
    await run(join(dir, "two"), { workers: 2 });
    expect(bytes(join(dir, "two"))).toBe(bytes(join(dir, "one")));
  });
});
