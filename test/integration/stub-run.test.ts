import { readdirSync, readFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { resolveAttacks } from "../../src/attacks/index.js";
import { ProvaelError } from "../../src/core/errors.js";
import { readJournal } from "../../src/rundir/journal.js";
import { LOCK_FILE } from "../../src/rundir/lock.js";
import type { PlanSpec } from "../../src/runner/plan.js";
import { runAttack } from "../../src/runner/run.js";
import { stubPlan, wrapStubAct } from "../support/stub-run.js";
import { tempDir } from "../support/tmp.js";

const plan = (over: Partial<PlanSpec> = {}): PlanSpec =>
  stubPlan({ tasks: ["fetch_cup", "wipe_plate", "grab_sponge"], seeds: 6, ...over });

async function run(
  out: string,
  over: Partial<PlanSpec> = {},
  extra: { concurrency?: number; resume?: boolean; maxEpisodes?: number } = {},
) {
  return runAttack({
    plan: plan(over),
    out,
    resume: extra.resume ?? false,
    concurrency: extra.concurrency ?? 1,
    policyOptions: {},
    commandLine: ["test"],
    finish: { html: false },
    ...(extra.maxEpisodes === undefined ? {} : { maxEpisodes: extra.maxEpisodes }),
  });
}

const bytes = (dir: string, file = "report.json") => readFileSync(join(dir, file), "utf8");

describe("a stub run", () => {
  it("gives the same report bytes with concurrency 1 and 8", async () => {
    const a = tempDir();
    const b = tempDir();
    await run(a, {}, { concurrency: 1 });
    await run(b, {}, { concurrency: 8 });
    expect(bytes(a)).toBe(bytes(b));
    expect(bytes(a, "trajectories.jsonl")).toBe(bytes(b, "trajectories.jsonl"));
  });

  it("resumes a stopped run to identical bytes", async () => {
    const whole = tempDir();
    const parts = tempDir();
    await run(whole);
    const first = await run(parts, {}, { maxEpisodes: 40, concurrency: 3 });
    expect(first.report).toBeNull();
    expect(readJournal(join(parts, "journal.jsonl")).episodes).toHaveLength(40);
    const second = await run(parts, {}, { resume: true });
    expect(second.played).toBe(first.total - 40);
    expect(bytes(parts)).toBe(bytes(whole));
  });

  it("validates against the committed JSON Schema", async () => {
    const out = tempDir();
    await run(out, { seeds: 2 });
    const schema = JSON.parse(
      readFileSync(join(import.meta.dirname, "..", "..", "schema", "report.schema.json"), "utf8"),
    );
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    const validate = ajv.compile(schema);
    const ok = validate(JSON.parse(bytes(out)));
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it("records every statistic, and attacks move the stub policy while controls do not", async () => {
    const out = tempDir();
    const { report } = await run(out, { seeds: 10 });
    if (!report) throw new Error("no report");
    expect(report.summary.baseline_unsafe.successes).toBe(0);
    expect(report.summary.control_unsafe.successes).toBe(0);
    expect(report.summary.treatment_unsafe.rate).toBeGreaterThan(0.3);
    for (const [name, arm] of Object.entries(report.arms)) {
      // N/A arms (the visual controls: the stub policy reads no camera) have no rates to test.
      if (arm.role === "baseline" || arm.not_applicable === arm.episodes) continue;
      expect(arm.not_delivered, name).toBe(0);
      expect(arm.vs_baseline?.fisher_p, name).not.toBeNull();
      expect(arm.vs_baseline?.mcnemar_p, name).not.toBeNull();
      expect(arm.unsafe.anytime, name).not.toBeNull();
      expect(arm.vs_baseline?.primary_p, name).not.toBeNull();
      expect(arm.risk_exposure.n, name).toBeGreaterThan(0);
      if (arm.role === "treatment") {
        expect(arm.vs_baseline?.bh_q, name).not.toBeNull();
        expect(arm.vs_baseline?.holm_p, name).not.toBeNull();
        expect(arm.vs_baseline?.adjusted_p, name).not.toBeNull();
        expect(arm.vs_baseline?.significant, name).toBe(
          (arm.vs_baseline?.adjusted_p as number) < 0.05,
        );
      } else expect(arm.vs_baseline?.significant, name).toBeNull();
    }
    expect(report.summary.significance).toMatchObject({
      test: "exact-mcnemar",
      alternative: "greater",
      multiplicity: "holm",
      alpha: 0.05,
    });
    // Fewer than five tasks: no task-clustered bootstrap, and the report says why.
    expect(report.run.tasks.length).toBeLessThan(5);
    expect(report.summary.treatment_unsafe.clustered).toBeNull();
    expect(report.summary.treatment_unsafe.clustered_reason).toContain("at least 5");
    expect(report.summary.preliminary).toBe(false);
    expect(readFileSync(join(out, "report.md"), "utf8")).toContain("McNemar p");
  });

  it("sums each arm's budget use over its counted episodes", async () => {
    const out = tempDir();
    const { report } = await run(out, {
      seeds: 2,
      arms: resolveAttacks(["none", "optimized_instruction", "targeted_hijack"]),
    });
    if (!report) throw new Error("no report");
    expect(report.arms.none?.budget_use).toBeNull();
    let spending = 0;
    for (const name of ["optimized_instruction", "targeted_hijack"]) {
      const arm = report.arms[name];
      const eps = report.episodes.filter(
        (e) => e.arm === name && e.error === null && e.termination !== "not_applicable",
      );
      const used = eps.map((e) => e.budget?.used ?? 0);
      if (arm?.budget_use === null) continue;
      spending++;
      expect(arm?.budget_use?.kind).toBe("queries");
      expect(arm?.budget_use?.episodes).toBe(eps.length);
      expect(arm?.budget_use?.used_total).toBe(used.reduce((a, b) => a + b, 0));
      expect(arm?.budget_use?.used_max).toBe(Math.max(...used));
      expect(arm?.budget_use?.used_total).toBeGreaterThan(0);
      expect(arm?.budget_use?.used_max).toBeLessThanOrEqual(arm?.budget_use?.limit ?? Infinity);
    }
    expect(spending).toBeGreaterThan(0);
    expect(readFileSync(join(out, "report.md"), "utf8")).toContain("## Budget use");
  });

  it("counts unjudged episodes apart and never as safe", async () => {
    const out = tempDir();
    // Scene 13 of every stub task has no pose sensor: seeds 13 and 14 cover it with pin 0.
    const { report } = await run(out, { seed: 12, seeds: 3, arms: ["none"] });
    if (!report) throw new Error("no report");
    const blind = report.episodes.filter((e) => e.scene === 13);
    expect(blind.length).toBe(3);
    for (const e of blind) {
      expect(e.unsafe).toBeNull();
      expect(e.judged_steps).toBe(0);
    }
    expect(report.arms.none?.unjudged).toBe(3);
    expect(report.arms.none?.unsafe.n).toBe(6);
    expect(report.summary.preliminary).toBe(true);
  });

  it("has null tests and says why without a baseline arm", async () => {
    const out = tempDir();
    const { report } = await run(out, { arms: ["roleplay"], seeds: 2 });
    expect(report?.arms.roleplay?.vs_baseline).toBeNull();
    expect(report?.tests.note).toMatch(/no baseline arm/);
  });

  it("refuses to overwrite a run and refuses a resume with another plan", async () => {
    const out = tempDir();
    await run(out, { seeds: 1 });
    await expect(run(out, { seeds: 1 })).rejects.toMatchObject({ code: "run/out-exists" });
    const err = await run(out, { seeds: 2 }, { resume: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProvaelError);
    expect((err as ProvaelError).code).toBe("run/plan-mismatch");
    expect((err as ProvaelError).message).toContain("seeds: 1 vs 2");
  });

  it("refuses a second writer while a run plays, and lets go of the directory when done", async () => {
    const out = tempDir();
    const first = run(out, { seeds: 2 });
    const second = await run(out, { seeds: 2 }, { resume: true }).catch((e: unknown) => e);
    expect(second).toMatchObject({ code: "run/out-exists" });
    expect((second as Error).message).toBe(
      `${out} is in use by provael attack (process ${process.pid} on ${hostname()})`,
    );
    expect((await first).report).not.toBeNull();
    expect(readdirSync(out)).not.toContain(LOCK_FILE);
    // A bad resume lets go too: the next writer is not told the directory is busy.
    await expect(run(out, { seeds: 3 }, { resume: true })).rejects.toMatchObject({
      code: "run/plan-mismatch",
    });
    expect((await run(out, { seeds: 2 }, { resume: true })).alreadyComplete).toBe(true);
    expect(readdirSync(out)).not.toContain(LOCK_FILE);
  });

  it("aborts past --max-errors, keeps the journal, and replays errored cells on resume", async () => {
    let broken = true;
    const restore = wrapStubAct((obs, act) => {
      if (broken && obs.instruction.includes("knife"))
        throw new ProvaelError("policy/timeout", "server gone");
      return act(obs);
    });
    try {
      const out = tempDir();
      const whole = tempDir();
      const p = {
        seeds: 3,
        tasks: ["fetch_cup"],
        arms: ["none", "goal_substitution", "paraphrase"],
      };
      await expect(
        runAttack({
          plan: plan(p),
          out,
          resume: false,
          concurrency: 1,
          policyOptions: {},
          commandLine: [],
          finish: { html: false },
          maxErrors: 1,
        }),
      ).rejects.toMatchObject({ code: "run/too-many-errors" });
      const journal = readJournal(join(out, "journal.jsonl"));
      expect(journal.episodes.filter((e) => e.record.error !== null).length).toBe(2);
      broken = false;
      await run(out, p, { resume: true });
      await run(whole, p);
      expect(bytes(out)).toBe(bytes(whole));
    } finally {
      restore();
    }
  });

  it("records a policy error for a bad action and goes on", async () => {
    const restore = wrapStubAct((obs, act) =>
      obs.instruction.includes("knife")
        ? new Float32Array([Number.NaN, 0, 0, 0, 0, 0, 0])
        : act(obs),
    );
    try {
      const out = tempDir();
      const { report } = await run(out, {
        seeds: 2,
        tasks: ["fetch_cup"],
        arms: ["none", "goal_substitution"],
      });
      expect(report?.arms.goal_substitution?.errors).toBe(2);
      expect(report?.arms.goal_substitution?.unsafe.n).toBe(0);
      expect(report?.arms.goal_substitution?.unsafe.rate).toBeNull();
      expect(report?.error_counts["policy/bad-action"]).toBe(2);
      expect(report?.arms.none?.errors).toBe(0);
    } finally {
      restore();
    }
  });
});
