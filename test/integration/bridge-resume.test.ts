/**
 * `provael bridge --resume`: a bridge restarted on the same --out continues its journal. The
 * episodes it holds stay (in the report and in the repeat counts), and a different setup is
 * refused with the field that differs, as `attack --resume` refuses one.
 */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { JournalWriter } from "../../src/rundir/journal.js";
import { LOCK_FILE } from "../../src/rundir/lock.js";
import { arm, bridge, closeOpen, journalled, playEpisode, records } from "../support/bridge.js";
import { runCli } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

afterEach(closeOpen);

describe("provael bridge --resume", () => {
  it("continues the journal: episodes kept, repeats counted from them, the report covers all", async () => {
    const out = join(tempDir(), "run");
    const first = await bridge("stub", ["none", "roleplay"], {}, undefined, { out });
    await playEpisode(arm(first.b, "none"), { seed: 0, success: true });
    await playEpisode(arm(first.b, "roleplay"), { seed: 0, success: false });
    await journalled(first.b, 2);
    const one = await first.b.close();
    expect(one.report.episodes).toHaveLength(2);

    // Without --resume a directory holding a run is refused, and the hint says how to go on.
    await expect(
      bridge("stub", ["none", "roleplay"], {}, undefined, { out }),
    ).rejects.toMatchObject({
      code: "run/out-exists",
      hint: expect.stringMatching(/--resume/),
    });
    // Another arm list, another profile field: refused, naming the field.
    await expect(
      bridge("stub", ["none", "freeze"], {}, undefined, { out, resume: true }),
    ).rejects.toMatchObject({ code: "run/plan-mismatch", message: expect.stringMatching(/arms:/) });

    const again = await bridge("stub", ["none", "roleplay"], {}, undefined, { out, resume: true });
    expect(again.b.finished()).toBe(2);
    // One writer at a time: a second bridge on the directory is told who holds it.
    await expect(
      bridge("stub", ["none", "roleplay"], {}, undefined, { out, resume: true }),
    ).rejects.toMatchObject({
      code: "run/out-exists",
      message: `${out} is in use by provael bridge (process ${process.pid} on ${hostname()})`,
    });
    await playEpisode(arm(again.b, "none"), { seed: 0, success: false });
    await playEpisode(arm(again.b, "none"), { seed: 1, success: true });
    await journalled(again.b, 4);
    const two = await again.b.close();
    const rs = records(out);
    // Seed 0 on `none` had finished once: the new one is its second repeat, not a replay.
    expect(rs.map((r) => [r.arm, r.seed, r.repeat])).toEqual([
      ["none", 0, 0],
      ["roleplay", 0, 0],
      ["none", 0, 1],
      ["none", 1, 0],
    ]);
    expect(two.report.episodes).toHaveLength(4);
    expect(two.report.arms.none?.episodes).toBe(3);
    expect(two.report.run.repeats).toBe(2);
    expect(readdirSync(out)).not.toContain(LOCK_FILE);
    const manifest = JSON.parse(readFileSync(join(out, "execution-manifest.json"), "utf8"));
    expect(manifest.resumed).toBe(true);
    // The report of the resumed run is what `provael report --in` reads.
    const md = runCli(["report", "--in", out]);
    expect(md.code, md.stderr).toBe(0);
  });

  it("refuses to resume a runner's run directory", async () => {
    // A bridged journal, its header stripped of the bridge mark: what a runner's run looks like.
    const out = join(tempDir(), "run");
    const b = await bridge("stub", ["none"], {}, undefined, { out });
    await b.b.close();
    const [head, ...rest] = readFileSync(join(out, "journal.jsonl"), "utf8").split("\n");
    const { bridge: _, sum: __, ...runner } = JSON.parse(head as string);
    rmSync(join(out, "journal.jsonl"));
    JournalWriter.create(join(out, "journal.jsonl"), runner).close();
    expect(rest.join("")).toBe("");
    await expect(
      bridge("stub", ["none"], {}, undefined, { out, resume: true }),
    ).rejects.toMatchObject({
      code: "run/plan-mismatch",
      message: expect.stringMatching(/not a bridged one/),
    });
  });
});
