import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseReport } from "../../src/rundir/report.js";
import { isJudged, isScored } from "../../src/rundir/report-consistency.js";
import { runCli, servePolicy, stopStarted } from "../support/cli.js";
import { tempDir } from "../support/tmp.js";

const PEER = join(import.meta.dirname, "..", "peers", "libero_peer.py");
const GOLDEN = join(import.meta.dirname, "..", "golden", "stats", "reference.json");

afterAll(stopStarted);

let upstream = "";
beforeAll(async () => {
  upstream = await servePolicy(["--policy", "stub", "--protocol", "vla-eval"]);
}, 60_000);

describe("LIBERO-Plus's perturbation category and level split the report", () => {
  it("report.json, report.md and the terminal give each arm's rates per category and level", () => {
    const out = join(tempDir(), "plus");
    // Three peer tasks: Camera Viewpoints level 1, Light Conditions level 2, and one without
    // classification (as on libero_90); two episodes each.
    const r = runCli(
      [
        ...["attack", "--suite", "vla-eval", "--profile", "libero_plus", "--policy", "vla-eval"],
        ...["--policy-url", upstream],
        ...["--attacks", "freeze", "--no-controls", "--preflight", "0", "--out", out, "--no-html"],
        "--benchmark-command",
        `/usr/bin/python3 ${PEER} --url {url} --libero-plus --tasks 3 --episodes 2 --timeout 30`,
      ],
      { timeoutMs: 240_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    // The reader refuses a split that contradicts the episodes (report-consistency.ts).
    const rep = parseReport(readFileSync(join(out, "report.json")), "report.json");
    expect(rep.run.bridge).toMatchObject({
      profile: "libero_plus",
      task_fields: ["category", "difficulty_level"],
    });
    expect(rep.episodes).toHaveLength(12);
    const split = rep.by_task_field ?? {};
    expect(Object.keys(split).sort()).toEqual(["category", "difficulty_level"]);
    expect(Object.keys(split.category ?? {})).toEqual(["Camera Viewpoints", "Light Conditions"]);
    expect(Object.keys(split.difficulty_level ?? {})).toEqual(["1", "2"]);
    const golden = JSON.parse(readFileSync(GOLDEN, "utf8")) as {
      groups: { wilsonInterval: { args: number[]; expected: number[] }[] };
    };
    for (const [field, byValue] of Object.entries(split))
      for (const [value, byArm] of Object.entries(byValue)) {
        expect(Object.keys(byArm).sort()).toEqual(["freeze", "none"]);
        for (const [arm, rates] of Object.entries(byArm)) {
          // The two episodes of that variant and arm, counted as the arms table counts them
          // (an attack that never reached the policy is in neither rate).
          const eps = rep.episodes.filter(
            (e) => e.arm === arm && String(e.bridge?.task[field]) === value,
          );
          expect(eps).toHaveLength(2);
          const judged = eps.filter(isJudged);
          const scored = eps.filter(isScored);
          expect(rates.unsafe).toMatchObject({
            n: judged.length,
            successes: judged.filter((e) => e.unsafe === true).length,
          });
          expect(rates.task_success).toMatchObject({
            n: scored.length,
            successes: scored.filter((e) => e.task_success === true).length,
          });
          for (const rate of [rates.unsafe, rates.task_success]) {
            if (rate.n === 0) continue;
            const ref = golden.groups.wilsonInterval.find(
              (c) => c.args[0] === rate.successes && c.args[1] === rate.n && c.args[2] === 0.95,
            )?.expected;
            expect(ref, `${field} ${value} ${arm}`).toBeDefined();
            expect(rate.interval?.low).toBeCloseTo(ref?.[0] ?? Number.NaN, 10);
            expect(rate.interval?.high).toBeCloseTo(ref?.[1] ?? Number.NaN, 10);
          }
        }
      }
    // The benign arm does the camera variant and not the light one: the split tells them apart.
    expect(split.category?.["Camera Viewpoints"]?.none?.task_success).toMatchObject({
      successes: 2,
      n: 2,
    });
    expect(split.category?.["Light Conditions"]?.none?.task_success).toMatchObject({
      successes: 0,
      n: 2,
    });
    const md = readFileSync(join(out, "report.md"), "utf8");
    expect(md).toContain("## Per task field");
    expect(md).toMatch(/### category, task success\n\n\| category \| none \| freeze \|/);
    expect(r.stdout).toMatch(/by category, unsafe \(95% Wilson\):\ncategory +none +freeze/);
    expect(r.stdout).toContain("Light Conditions");
  }, 300_000);
});
