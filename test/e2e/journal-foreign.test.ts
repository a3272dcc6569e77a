/**
 * Journal inputs from the fault-injection round (issue 59): a line played under another plan is
 * refused by `--resume`, `merge` and `calibrate --from` naming the line and the field; a
 * `journal.jsonl` that is a directory is bad input. Every such input ends in exit 0 or 2.
 */
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

const root = tempDir("provael-journal-foreign-");
// No report.html: the tests read journals and reports only. In the main thread: a small run
// spends half its CPU starting worker threads.
const base = [
  ...["attack", "--policy", "stub", "--suite", "stub", "--attacks", "none", "--seeds", "3"],
  ...["--no-html", "--workers", "1"],
];
const journalOf = (dir: string) => readFileSync(join(dir, "journal.jsonl"), "utf8");

/** An unfinished run directory: `dir`'s journal with its last episode replaced by `foreign`. */
function spliced(dir: string, foreign: string, name: string): { out: string; line: number } {
  const lines = journalOf(dir).split("\n").filter(Boolean);
  const out = join(root, name);
  mkdirSync(out);
  writeFileSync(join(out, "journal.jsonl"), `${[...lines.slice(0, -1), foreign].join("\n")}\n`);
  return { out, line: lines.length };
}

/** A finished run directory copied whole, its journal's line 4 replaced by `foreign`. */
function splicedFinished(dir: string, foreign: string, name: string): string {
  const out = join(root, name);
  cpSync(dir, out, { recursive: true });
  const lines = journalOf(dir).split("\n").filter(Boolean);
  lines[3] = foreign;
  writeFileSync(join(out, "journal.jsonl"), `${lines.join("\n")}\n`);
  return out;
}

beforeAll(() => {
  for (const [name, flags] of [
    ["h20", ["--horizon", "20"]],
    ["h7", ["--horizon", "7"]],
    ["pin3", ["--horizon", "20", "--scene-pin", "3"]],
  ] as const) {
    const r = runCli([...base, ...flags, "--out", join(root, name)]);
    expect(r.code, r.stderr).toBe(0);
  }
}, 300_000);

describe("a journal line played under another plan", () => {
  it("--resume refuses a line from a run with another --horizon, naming the line and the field (exit 2)", () => {
    const foreign = journalOf(join(root, "h7")).split("\n")[3] as string;
    const { out, line } = spliced(join(root, "h20"), foreign, "resume-horizon");
    const r = runCli([...base, "--horizon", "20", "--out", out, "--resume"]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`line ${line} was played under another plan`);
    expect(r.stderr).toMatch(/differs in horizon \(the header's: 20\)/);
    expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
  });

  it("--resume refuses a line from a --scene-pin run before playing anything (exit 2, not 4)", () => {
    const foreign = journalOf(join(root, "pin3")).split("\n")[2] as string;
    const { out, line } = spliced(join(root, "h20"), foreign, "resume-pin");
    const r = runCli([...base, "--horizon", "20", "--out", out, "--resume"]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`line ${line} was played under another plan`);
    expect(r.stderr).toMatch(/differs in scene_pin/);
    expect(r.stderr).not.toMatch(/reset is not deterministic/);
  });

  it("merge and calibrate --from refuse it too, naming the line and the field (exit 2)", () => {
    const foreign = journalOf(join(root, "h7")).split("\n")[1] as string;
    const dir = splicedFinished(join(root, "h20"), foreign, "merge-in");
    const merged = runCli(["merge", "--in", dir, "--out", join(root, "merged")]);
    expect(merged.code, merged.stderr).toBe(2);
    expect(merged.stderr).toMatch(/line 4 was played under another plan .*horizon/);
    const cal = runCli(["calibrate", "--from", dir, "--out", join(root, "cal.json")]);
    expect(cal.code, cal.stderr).toBe(2);
    expect(cal.stderr).toMatch(/line 4 was played under another plan .*horizon/);
  });
});

describe("journal.jsonl that is a directory", () => {
  it("--resume says so and exits 2, with no stack trace", () => {
    const dir = join(root, "dir-journal");
    mkdirSync(join(dir, "journal.jsonl"), { recursive: true });
    const r = runCli([...base, "--out", dir, "--resume"]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/journal\.jsonl is a directory/);
    expect(r.stderr).not.toMatch(/internal error|EISDIR|this is a bug|\n\s+at /);
    rmSync(dir, { recursive: true, force: true });
  });
});
