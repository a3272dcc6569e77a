/**
 * `provael attack --reuse DIR`: a run of more seeds copies an earlier run's finished episodes
 * instead of playing them, and its report is the very bytes of a run that played every cell.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveAttacks } from "../../src/attacks/index.js";
import { ProvaelError } from "../../src/core/errors.js";
import { JournalWriter, readJournal } from "../../src/rundir/journal.js";
import type { PlanSpec } from "../../src/runner/plan.js";
import { runAttack } from "../../src/runner/run.js";
import { stubPlan, wrapStubAct } from "../support/stub-run.js";
import { tempDir } from "../support/tmp.js";

async function run(
  out: string,
  plan: PlanSpec,
  extra: { reuse?: string[]; resume?: boolean; maxEpisodes?: number } = {},
) {
  return runAttack({
    plan,
    out,
    resume: extra.resume ?? false,
    concurrency: 2,
    policyOptions: {},
    commandLine: ["test"],
    finish: { html: false },
    ...(extra.reuse ? { reuse: extra.reuse } : {}),
    ...(extra.maxEpisodes === undefined ? {} : { maxEpisodes: extra.maxEpisodes }),
  });
}

const read = (dir: string, file: string) => readFileSync(join(dir, file), "utf8");

function same(a: string, b: string): void {
  expect(read(a, "report.json")).toBe(read(b, "report.json"));
  expect(read(a, "trajectories.jsonl")).toBe(read(b, "trajectories.jsonl"));
}

describe("attack --reuse", () => {
  it("plays only the new seeds, and writes the bytes of a run that played them all", async () => {
    const three = tempDir();
    const six = tempDir();
    const fresh = tempDir();
    const small = await run(three, stubPlan({ seeds: 3 }));
    const grown = await run(six, stubPlan({ seeds: 6 }), { reuse: [three] });
    const whole = await run(fresh, stubPlan({ seeds: 6 }));
    expect(grown.played).toBe(whole.total - small.total);
    expect(grown.copied).toBe(small.total);
    same(six, fresh);
    const manifest = JSON.parse(read(six, "execution-manifest.json"));
    expect(manifest.reused).toEqual([{ dir: three, seeds: 3, episodes: small.total }]);

    // The other way round: a run of fewer seeds takes what it needs from a larger one.
    const back = tempDir();
    const shrunk = await run(back, stubPlan({ seeds: 3 }), { reuse: [fresh] });
    expect(shrunk.played).toBe(0);
    same(back, three);
  });

  it("replays a reused run's errored episodes, and a run stopped after copying resumes", async () => {
    let calls = 0;
    const restore = wrapStubAct((obs, act) => {
      calls += 1;
      if (calls === 7) throw new ProvaelError("policy/timeout", "server went away");
      return act(obs);
    });
    const two = tempDir();
    try {
      await run(two, stubPlan({ seeds: 2 }));
    } finally {
      restore();
    }
    const errored = readJournal(join(two, "journal.jsonl")).episodes.filter(
      (e) => e.record.error !== null,
    );
    expect(errored).toHaveLength(1);
    const four = tempDir();
    // Stopped after one new episode: the copied ones are in its journal, so --resume needs no --reuse.
    const first = await run(four, stubPlan({ seeds: 4 }), { reuse: [two], maxEpisodes: 1 });
    expect(first.report).toBeNull();
    // Every finished episode of the 2-seed run is copied; its errored one is not (it is pending).
    const lines = readJournal(join(four, "journal.jsonl")).episodes;
    const copied = lines.slice(0, -1).map((e) => e.record.cell);
    expect(copied).toHaveLength(first.total / 2 - 1);
    expect(copied).not.toContain(errored[0]?.record.cell);
    await run(four, stubPlan({ seeds: 4 }), { resume: true });
    const fresh = tempDir();
    await run(fresh, stubPlan({ seeds: 4 }));
    same(four, fresh);
  });

  it("refuses, before playing, a run of another plan, of other weights, itself, or none", async () => {
    const two = tempDir();
    await run(two, stubPlan({ seeds: 2 }));
    const other = stubPlan({ seeds: 4, arms: resolveAttacks(["none", "instruction"]) });
    await expect(run(tempDir(), other, { reuse: [two] })).rejects.toMatchObject({
      code: "run/plan-mismatch",
      message: expect.stringMatching(/differs in more than the number of seeds \(arms: /),
    });
    await expect(
      run(two, stubPlan({ seeds: 2 }), { reuse: [two], resume: true }),
    ).rejects.toMatchObject({
      code: "config/invalid",
    });
    await expect(
      run(tempDir(), stubPlan({ seeds: 4 }), { reuse: [tempDir()] }),
    ).rejects.toMatchObject({
      code: "run/not-found",
    });

    // The same plan played with other weights: its journal's header names them.
    const { header, episodes } = readJournal(join(two, "journal.jsonl"));
    const forged = tempDir();
    const w = JournalWriter.create(join(forged, "journal.jsonl"), {
      ...header,
      policy_digest: "sha256:other",
    });
    for (const e of episodes) w.append(e);
    w.close();
    const out = tempDir();
    await expect(run(out, stubPlan({ seeds: 4 }), { reuse: [forged] })).rejects.toMatchObject({
      code: "run/plan-mismatch",
      message: expect.stringMatching(/played policy weights sha256:other, these are /),
    });
    expect(() => read(out, "journal.jsonl")).toThrow();
  });
});
