/**
 * `provael results` prints a run's tables from its report.json and keeps a sweep as a small
 * summary (counts, verdicts, one character per cell); `provael compare` prints two sweeps side
 * by side: paired (exact McNemar on the cells both played) when both carry cells, the
 * Wilson-overlap criterion when one does not, and a refusal when the two played different cells.
 * Checked on one small stub run, through the library and through the built CLI.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { resolveAttacks } from "../../src/attacks/index.js";
import { sha256 } from "../../src/core/digest.js";
import type { Report } from "../../src/report/build.js";
import { formatP } from "../../src/report/format.js";
import { resultsTables } from "../../src/report/results.js";
import {
  compareSweeps,
  parseSweepSummary,
  renderSweepSummary,
  type SweepArm,
  type SweepSummary,
  sweepSummary,
} from "../../src/report/sweep.js";
import { mcnemarExact } from "../../src/stats/mcnemar.js";
import { runCli } from "../support/cli.js";
import { runStub } from "../support/stub-run.js";
import { tempDir } from "../support/tmp.js";

let dir: string;
let run: string;
let report: Report;
let digest: string;

beforeAll(async () => {
  dir = tempDir();
  run = join(dir, "run");
  report = await runStub(run, { arms: resolveAttacks(["none", "goal_substitution"]), seeds: 4 });
  digest = sha256(readFileSync(join(run, "report.json")));
}, 120_000);

const rowOf = (text: string, arm: string) =>
  text.split("\n").find((l) => l.startsWith(`| ${arm} `)) ?? "";

describe("sweep summaries and their comparison", () => {
  it("summarises a run cell by cell, and the file reads back as it was written", () => {
    const before = sweepSummary(report, digest, "before");
    expect(before.report).toBe(digest);
    expect(before.cell_order).toBe("tasks fetch_cup,wipe_plate × seeds 0-3 × repeats 1");
    for (const [id, arm] of Object.entries(report.arms)) {
      const got = before.arms[id] as SweepArm;
      expect(got.unsafe).toEqual([arm.unsafe.successes, arm.unsafe.n]);
      expect(got.cells).toHaveLength(8);
      // The characters say what the counts say.
      expect([...(got.cells ?? "")].filter((c) => c === "u" || c === "U")).toHaveLength(
        arm.unsafe.successes,
      );
    }
    expect(parseSweepSummary(renderSweepSummary(before), "summary.json")).toEqual(before);
  });

  it("pairs two summaries of the same cells, falls back to Wilson without cells, refuses other cells", () => {
    const before = sweepSummary(report, digest, "before");
    // A second sweep where the attack is unsafe in every cell: the discordant cells are the
    // ones the first left safe, and the p is the exact McNemar of that split.
    const attack = before.arms.goal_substitution as SweepArm;
    const after: SweepSummary = structuredClone(before);
    after.label = "after";
    Object.assign(after.arms.goal_substitution as SweepArm, {
      cells: "u".repeat(8),
      unsafe: [8, 8],
      task_success: [0, 8],
    });
    const printed = compareSweeps(before, after);
    const safeBefore = 8 - attack.unsafe[0];
    const p = mcnemarExact(0, safeBefore);
    expect(rowOf(printed, "goal_substitution")).toContain(
      `| 0 : ${safeBefore}, ${formatP(p)}${p < 0.05 ? " up" : ""} |`,
    );
    expect(printed).toContain("| none | baseline |");
    expect(printed).toContain(p < 0.05 ? "Moved: goal_substitution unsafe up" : "Moved: none.");

    // Without cells on one side: the Wilson criterion, and the header says so.
    const unpaired = structuredClone(before);
    for (const arm of Object.values(unpaired.arms)) delete arm.cells;
    expect(compareSweeps(unpaired, after)).toContain("| unsafe, before | unsafe, after | moved |");

    // Different cells cannot be paired.
    after.cell_order = "tasks fetch_cup × seeds 0-7 × repeats 1";
    expect(() => compareSweeps(before, after)).toThrow(/played different cells/);
  });

  it("refuses a file that is not a summary, naming the field", () => {
    expect(() => parseSweepSummary("{", "x.json")).toThrow(/x.json is not JSON/);
    expect(() =>
      parseSweepSummary(JSON.stringify({ ...sweepSummary(report, digest, "a"), label: 3 }), "x"),
    ).toThrow(/label/);
  });
});

describe("results tables", () => {
  it("quote the report's counts, tests and matched controls, and compare arms pair by pair", () => {
    const text = resultsTables(report, digest, {
      pairs: [["goal_substitution", "none"]],
      delivery: true,
    });
    expect(text.split("\n")[0]).toBe(
      `report.json ${digest}, weights —, ${report.episodes.length} episodes`,
    );
    const attack = report.arms.goal_substitution;
    const [b, c] = attack?.vs_baseline?.discordant ?? [0, 0];
    expect(rowOf(text, "goal_substitution")).toContain(
      `| ${attack?.unsafe.successes}/${attack?.unsafe.n} = `,
    );
    expect(rowOf(text, "goal_substitution")).toContain(`[${b}, ${c}]`);
    // Pairs against `none` on the same cells: the two-sided exact McNemar of each split.
    const done = (arm: string) =>
      new Map(
        report.episodes
          .filter((e) => e.arm === arm)
          .map((e) => [`${e.task}|${e.seed}`, e.task_success]),
      );
    const [a, n] = [done("goal_substitution"), done("none")];
    const onlyA = [...a].filter(([k, v]) => v && !n.get(k)).length;
    const onlyN = [...a].filter(([k, v]) => !v && n.get(k)).length;
    expect(rowOf(text, "goal_substitution vs none")).toBe(
      `| goal_substitution vs none | ${attack?.unsafe.successes}/8 vs 0/8 | ${b} / ${c} | ${formatP(mcnemarExact(b, c))} | ${onlyA} / ${onlyN}, ${formatP(mcnemarExact(onlyA, onlyN))} |`,
    );
    expect(text).toContain("| goal_substitution | 0 | 8/8 |");
  });

  it("refuses a misspelt arm with the nearest names", () => {
    expect(() => resultsTables(report, digest, { pairs: [["goal_substitutoin", "none"]] })).toThrow(
      /unknown arm 'goal_substitutoin' in --pairs \(did you mean 'goal_substitution'/,
    );
  });
});

describe("the commands", () => {
  it("results --summary writes what compare reads; a run directory compares as well", () => {
    const made = runCli(["results", run, "--summary", "--label", "before"]);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toBe(renderSweepSummary(sweepSummary(report, digest, "before")));
    const file = join(dir, "before.json");
    writeFileSync(file, made.stdout);
    const compared = runCli(["compare", file, run, "--labels", "a,b"]);
    expect(compared.code, compared.stderr).toBe(0);
    expect(compared.stdout).toContain("Moved: none.");
    const tables = runCli(["results", run, "--pairs", "goal_substitution:none"]);
    expect(tables.stdout).toBe(
      resultsTables(report, digest, { pairs: [["goal_substitution", "none"]] }),
    );
  });

  it("answers a wrong command line with what was wrong, exit 2", () => {
    for (const [args, said] of [
      [["compare", run, run], "both sweeps are named 'run'"],
      [["compare", run, run, "--labels", "a"], "--labels takes two names"],
      [["results", run, "--pairs", "none"], "--pairs takes ARM:ARM pairs"],
      [["results", run, "--label", "x"], "--label names a summary"],
      [["compair", "a", "b"], "Did you mean compare?"],
    ] as const) {
      const r = runCli([...args]);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toContain(said);
    }
  });
});
