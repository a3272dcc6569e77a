/**
 * Runs with defenses on the stub pair: pairing, stops, the mitigation section, determinism across
 * concurrency and worker threads (the worker module is the build's, see test/support).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { mitigationNotes } from "../../src/report/mitigation-text.js";
import { buildSarif } from "../../src/report/sarif.js";
import { reportSchema } from "../../src/report/schema.js";
import { planCells } from "../../src/runner/plan.js";
import { planFromReport } from "../../src/runner/replay.js";
import { runAttack } from "../../src/runner/run.js";
import { mcnemarExactGreater } from "../../src/stats/index.js";
import { stubPlan } from "../support/stub-run.js";
import { tempDir } from "../support/tmp.js";

const plan = stubPlan({
  tasks: ["fetch_cup", "wipe_plate"],
  arms: ["none", "roleplay", "goal_substitution"],
  seeds: 6,
  defenses: { ids: ["instruction_filter"], compare: true, params: {} },
});

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
const read = (dir: string, f = "report.json") => readFileSync(join(dir, f), "utf8");

describe("--compare-defenses on the stub pair", () => {
  it("plays every cell both ways, pairs them, and reports the mitigation from the episodes", async () => {
    const dir = tempDir();
    const { report } = await run(join(dir, "a"));
    if (!report) throw new Error("no report");
    expect(reportSchema.safeParse(report).success).toBe(true);
    const cells = planCells(plan);
    expect(cells).toHaveLength(2 * 3 * 6 * 2);
    // Undefended cells keep the ids a run without defenses gives them.
    const plain = planCells(
      stubPlan({ ...plan, defenses: { ids: [], compare: false, params: {} } }),
    ).map((c) => c.id);
    expect(cells.filter((c) => !c.defenses).map((c) => c.id)).toEqual(plain);
    const eps = report.episodes;
    expect(eps).toHaveLength(cells.length);
    // Same scene digests cell by cell.
    for (const d of eps.filter((e) => e.defenses)) {
      const u = eps.find(
        (e) => !e.defenses && e.task === d.task && e.arm === d.arm && e.seed === d.seed,
      );
      expect(u?.scene_digest).toBe(d.scene_digest);
    }
    const m = report.mitigation;
    if (!m) throw new Error("no mitigation");
    for (const arm of plan.arms) {
      const a = m.arms[arm];
      if (!a) throw new Error(arm);
      // Recomputed from the episodes: pairs, discordant counts, the test, the stops.
      let b = 0;
      let c = 0;
      let pairs = 0;
      for (const d of eps.filter((e) => e.defenses && e.arm === arm)) {
        const u = eps.find(
          (e) => !e.defenses && e.task === d.task && e.arm === arm && e.seed === d.seed,
        );
        if (!u || u.unsafe === null || d.unsafe === null) continue;
        pairs += 1;
        if (u.unsafe && !d.unsafe) b += 1;
        if (!u.unsafe && d.unsafe) c += 1;
      }
      expect(a.pairs).toBe(pairs);
      expect(a.discordant).toEqual([b, c]);
      expect(a.reduction_p).toBe(mcnemarExactGreater(b, c));
      const stops = eps.filter((e) => e.defenses && e.arm === arm && e.stop != null).length;
      expect(a.stopped.successes).toBe(stops);
      for (const e of eps.filter((x) => x.stop != null)) {
        expect(e.termination).toBe("stop");
        expect(e.task_success).not.toBe(true);
      }
    }
    // A refused instruction stops the arm before its first action: not unsafe, not a success,
    // counted in the denominator (docs/adr/0008).
    const refused = eps.filter((e) => e.stop?.step === 0);
    expect(refused.length).toBeGreaterThan(0);
    for (const e of refused) {
      expect(e.steps).toBe(0);
      expect(e.unsafe).toBe(false);
      expect(e.task_success).toBe(false);
      expect(e.stop?.defense).toBe("instruction_filter");
    }
    // The benign instruction is accepted as it is: no false stop, no task cost.
    expect(m.price?.false_stop.successes).toBe(0);
    // The filter removes what the instruction attacks add on the stub policy.
    const rp = m.arms.roleplay;
    expect(rp?.undefended_unsafe.successes).toBeGreaterThan(0);
    expect(rp?.defended_unsafe.successes).toBe(0);
    // No arm attacks the filter adaptively: the report says so.
    expect(report.run.defenses?.never_adaptive).toEqual(["instruction_filter"]);
    // Latency is wall clock: in the manifest, never in report.json.
    expect(read(join(dir, "a"))).not.toMatch(/ms_per_step/);
    const manifest = JSON.parse(read(join(dir, "a"), "execution-manifest.json"));
    expect(manifest.defense_latency.all.steps).toBeGreaterThan(0);
    // Every format carries it: report.md's section and headline note, SARIF's results.
    const md = read(join(dir, "a"), "report.md");
    expect(md).toMatch(/## Mitigation \(undefended vs defended, paired\)/);
    expect(md).toMatch(/Never measured against an adaptive attack: instruction_filter/);
    // A calibrated task's defenses used its zone and envelope, not the params printed: said so.
    expect(mitigationNotes(report).join("\n")).not.toMatch(/Calibrated tasks/);
    const calibrated = {
      ...report,
      calibration: {
        ...report.calibration,
        fetch_cup: {
          predicate: "calibrated_keep_out",
          source: "calibration:fetch_cup.calibration.json",
          digest: "sha256:0",
        },
      },
    };
    expect(mitigationNotes(calibrated).join("\n")).toMatch(
      /Calibrated tasks \(1 of 2\) gave the defenses their calibrated keep-out zone/,
    );
    const sarif = buildSarif(report) as {
      runs: { results: { message: { text: string }; properties: Record<string, unknown> }[] }[];
    };
    const rpResult = sarif.runs[0]?.results.find((r) => r.properties.arm === "roleplay");
    expect(rpResult?.message.text).toMatch(/With instruction_filter: unsafe/);
    expect(rpResult?.properties.mitigation).toBeDefined();
    // The report replays to the same plan, defenses included.
    expect(planFromReport(report, "report.json")).toEqual(plan);
    // Deterministic: the same bytes from a second run.
    await run(join(dir, "b"), { concurrency: 3 });
    expect(read(join(dir, "b"))).toBe(read(join(dir, "a")));
    // And across worker threads: each worker begins its cells' defenses from the cell alone.
    await run(join(dir, "c"), { workers: 2 });
    expect(read(join(dir, "c"))).toBe(read(join(dir, "a")));
  });
});
