/**
 * scripts/sweep-beside.mjs keeps a sweep as a small summary (counts, verdicts, one character per
 * cell) and prints two sweeps side by side: paired (exact McNemar on the cells both played)
 * when both summaries carry cells, the Wilson-overlap criterion when one does not, and a refusal
 * when the two sweeps played different cells. Checked on a stub run (the script reads reports).
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveAttacks } from "../../src/attacks/index.js";
import { mcnemarExact } from "../../src/stats/mcnemar.js";
import { runStub } from "../support/stub-run.js";
import { tempDir } from "../support/tmp.js";

const SCRIPT = join(import.meta.dirname, "..", "..", "scripts", "sweep-beside.mjs");
const script = (...args: string[]) =>
  spawnSync(process.execPath, [SCRIPT, ...args], { encoding: "utf8" });

interface Arm {
  role: string;
  unsafe: [number, number];
  task_success: [number, number];
  cells?: string;
}
interface Summary {
  label: string;
  cell_order: string;
  arms: Record<string, Arm>;
}

describe("scripts/sweep-beside.mjs", () => {
  it("summarises a run cell by cell and pairs two summaries of the same cells", async () => {
    const dir = tempDir();
    const run = join(dir, "run");
    const report = await runStub(run, {
      arms: resolveAttacks(["none", "goal_substitution"]),
      seeds: 4,
    });
    const made = script("summary", run, "--label", "before");
    expect(made.status, made.stderr).toBe(0);
    const before = JSON.parse(made.stdout) as Summary;
    expect(before.cell_order).toBe("tasks fetch_cup,wipe_plate × seeds 0-3 × repeats 1");
    for (const [id, arm] of Object.entries(report.arms)) {
      const got = before.arms[id] as Arm;
      expect(got.unsafe).toEqual([arm.unsafe.successes, arm.unsafe.n]);
      expect(got.cells).toHaveLength(8);
      // The characters say what the counts say.
      expect([...(got.cells ?? "")].filter((c) => c === "u" || c === "U")).toHaveLength(
        arm.unsafe.successes,
      );
    }

    // A second sweep where the attack is unsafe in every cell: the discordant cells are the
    // ones the first left safe, and the p is the exact McNemar of that split.
    const attack = before.arms.goal_substitution as Arm;
    const after: Summary = structuredClone(before);
    after.label = "after";
    (after.arms.goal_substitution as Arm).cells = "u".repeat(8);
    (after.arms.goal_substitution as Arm).unsafe = [8, 8];
    (after.arms.goal_substitution as Arm).task_success = [0, 8];
    const a = join(dir, "before.json");
    const b = join(dir, "after.json");
    writeFileSync(a, JSON.stringify(before));
    writeFileSync(b, JSON.stringify(after));
    const printed = script("beside", a, b);
    expect(printed.status, printed.stderr).toBe(0);
    const safeBefore = 8 - attack.unsafe[0];
    const row = printed.stdout.split("\n").find((l) => l.startsWith("| goal_substitution "));
    expect(row).toContain(`| 0 : ${safeBefore}, `);
    const p = mcnemarExact(0, safeBefore);
    expect(row).toContain(p < 0.05 ? " up |" : `${p.toPrecision(2)} |`);
    expect(printed.stdout).toContain("| none | baseline |");

    // Without cells on one side: the Wilson criterion, and the header says so.
    for (const arm of Object.values(before.arms)) delete arm.cells;
    writeFileSync(a, JSON.stringify(before));
    const unpaired = script("beside", a, b);
    expect(unpaired.stdout).toContain("| unsafe, before | unsafe, after | moved |");

    // Different cells cannot be paired.
    after.cell_order = "tasks fetch_cup × seeds 0-7 × repeats 1";
    const summaryAgain = JSON.parse(script("summary", run, "--label", "x").stdout) as Summary;
    writeFileSync(a, JSON.stringify(summaryAgain));
    writeFileSync(b, JSON.stringify(after));
    const refused = script("beside", a, b);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain("played different cells");
  });

  it("answers a wrong command line with what was wrong and the usage, exit 2", () => {
    for (const [args, said] of [
      [[], "no mode"],
      [["merge", "a", "b"], "unknown mode merge"],
      [["summary", "run"], "summary needs one RUN_DIR and --label"],
      [["beside", "a.json"], "beside needs two summaries"],
      [["beside", "a.json", "b.json", "--lable", "x"], "Unknown option '--lable'"],
    ] as const) {
      const r = script(...args);
      expect(r.status, args.join(" ")).toBe(2);
      expect(r.stderr).toContain(said);
      expect(r.stderr).toContain("usage: node scripts/sweep-beside.mjs summary RUN_DIR");
    }
  });
});
