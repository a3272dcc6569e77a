/** `provael report --expect`: missing cells are listed and the exit code says incomplete. */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { runStub } from "../support/stub-run.js";
import { tempDir } from "../support/tmp.js";

describe("provael report --expect (built CLI)", () => {
  it("a run smaller than expected exits 3 and lists what is missing; a complete one exits 0", async () => {
    const out = join(tempDir(), "run");
    // 2 tasks × 2 seeds on the stub pair, arms none and roleplay.
    await runStub(out, { seeds: 2 });
    const full = runCli(["report", "--in", out, "--expect", "2x2"]);
    expect(full.code, full.stderr).toBe(0);
    expect(full.stdout).toContain("Every expected cell has an episode record.");

    const short = runCli(["report", "--in", out, "--expect", "3x4"]);
    expect(short.code).toBe(3);
    expect(short.stderr).toMatch(/incomplete: \d+ of \d+ expected cells have no episode/);
    expect(short.stdout).toContain("**Incomplete:**");
    expect(short.stdout).toContain("1 expected task(s) never ran");
    expect(short.stdout).toMatch(/fetch_cup: missing seeds none: 2-3/);

    const json = runCli(["report", "--in", out, "--format", "json", "--expect", "3x4"]);
    expect(json.code).toBe(3);
    const parsed = JSON.parse(json.stdout) as {
      expected: { complete: boolean; unseen_tasks: number };
    };
    expect(parsed.expected).toMatchObject({ complete: false, unseen_tasks: 1 });

    const bad = runCli(["report", "--in", out, "--expect", "lots"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--expect must be TASKSxEPISODES");
  });
});
