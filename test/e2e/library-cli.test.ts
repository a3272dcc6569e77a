/**
 * One writer for the run directory: `runAttack` called as a library and `provael attack` on the
 * same plan write the same files (report.json, report.md, report.html, trajectories, manifest)
 * and the same report.json bytes. The CLI only parses flags, calls the library and prints.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import type { PlanSpec } from "../../src/core/plan.js";
import { runAttack } from "../../src/runner/run.js";
import { runCli } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

function files(root: string, dir = root): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(root, p) : [relative(root, p)];
  });
}

describe("library and CLI write one run directory", () => {
  it("runAttack and `provael attack` on the stub quick run: same files, same report bytes", async () => {
    const args = [
      "attack",
      "--policy",
      "stub",
      "--suite",
      "stub",
      "--seeds",
      "2",
      "--tasks",
      "fetch_cup",
    ];
    const planned = runCli([...args, "--dry-run", "--json"]);
    expect(planned.code, planned.stderr).toBe(0);
    const plan = (JSON.parse(planned.stdout) as { plan: PlanSpec }).plan;
    const root = tempDir();
    const cli = runCli([...args, "--out", join(root, "cli")]);
    expect(cli.code, cli.stderr).toBe(0);
    const lib = await runAttack({
      plan,
      out: join(root, "lib"),
      resume: false,
      concurrency: 1,
      policyOptions: {},
      commandLine: ["library"],
    });
    expect(lib.report).not.toBeNull();
    const cliFiles = files(join(root, "cli")).sort();
    expect(files(join(root, "lib")).sort()).toEqual(cliFiles);
    expect(cliFiles).toEqual(
      expect.arrayContaining([
        "report.json",
        "report.md",
        "report.html",
        "trajectories.jsonl",
        "execution-manifest.json",
      ]),
    );
    const bytes = (d: string, f: string) => readFileSync(join(root, d, f));
    expect(bytes("lib", "report.json").equals(bytes("cli", "report.json"))).toBe(true);
    expect(bytes("lib", "report.md").equals(bytes("cli", "report.md"))).toBe(true);
    expect(bytes("lib", "trajectories.jsonl").equals(bytes("cli", "trajectories.jsonl"))).toBe(
      true,
    );
    // The manifest differs only in what it is for: the command line and the clock.
    const manifest = (d: string) => JSON.parse(bytes(d, "execution-manifest.json").toString());
    expect(Object.keys(manifest("lib").outputs)).toEqual(Object.keys(manifest("cli").outputs));
    expect(manifest("lib").report_digest).toBe(manifest("cli").report_digest);
  });
});
