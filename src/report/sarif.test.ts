import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv04 from "ajv-draft-04";
import addFormats from "ajv-formats";
import { beforeAll, describe, expect, it } from "vitest";
import { runStub } from "../../test/support/stub-run.js";
import { tempDir } from "../../test/support/tmp.js";
import { resolveAttacks } from "../attacks/index.js";
import type { ArmReport, Rate, Report } from "./build.js";
import { armFingerprint, armLevel, buildSarif, writeSarif } from "./sarif.js";

const schema = JSON.parse(
  readFileSync(
    join(import.meta.dirname, "..", "..", "schema", "vendor", "sarif-schema-2.1.0.json"),
    "utf8",
  ),
);
// ajv-draft-04 and ajv-formats are CommonJS: under NodeNext their classes sit on `.default`.
const ajv = new Ajv04.default({ allErrors: true, strict: false });
addFormats.default(ajv);
const validate = ajv.compile(schema);

const stubRun = (out: string, attacks: string[], seeds = 5, seed = 0): Promise<Report> =>
  runStub(out, { arms: resolveAttacks(attacks), seeds, seed });

const expectValid = (log: unknown) => {
  const ok = validate(log);
  expect(ok, JSON.stringify(validate.errors?.slice(0, 3), null, 1)).toBe(true);
};

let full: Report;
let fullDir: string;
let noBaseline: Report;
let onlyBaseline: Report;
let otherSeeds: Report;

beforeAll(async () => {
  const root = tempDir();
  fullDir = join(root, "full");
  full = await stubRun(fullDir, ["none", "control", "instruction"]);
  noBaseline = await stubRun(join(root, "nobase"), ["instruction"]);
  onlyBaseline = await stubRun(join(root, "onlybase"), ["none"]);
  otherSeeds = await stubRun(join(root, "other"), ["none", "control", "instruction"], 6, 10);
});

type Log = {
  runs: Array<{
    tool: {
      driver: {
        name: string;
        version: string;
        rules: Array<{ id: string; properties: { tags: string[] } }>;
      };
    };
    results: Array<{
      ruleId: string;
      level: string;
      message: { text: string };
      partialFingerprints: Record<string, string>;
      locations: Array<{
        physicalLocation: { region: { startLine: number; startColumn?: number } };
        logicalLocations: Array<{ name: string }>;
      }>;
      properties: { arm: string; controls: Array<{ arm: string }> };
    }>;
    properties: { summary: { treatment_unsafe: { n: number } } };
  }>;
};

describe("SARIF", () => {
  it("validates against the OASIS SARIF 2.1.0 schema, with and without a baseline or treatments", () => {
    for (const r of [full, noBaseline, onlyBaseline]) expectValid(buildSarif(r));
    expectValid(buildSarif(full, { reportUri: "runs/x/report.json" }));
  });

  it("uses a validator that rejects broken logs", () => {
    const log = buildSarif(full) as unknown as Log & { version?: string };
    expect(validate({ ...log, version: "2.0.0" })).toBe(false);
    const bad = structuredClone(log);
    (bad.runs[0]?.results[0] as { level: string }).level = "fatal";
    expect(validate(bad)).toBe(false);
  });

  it("has one rule per EAI risk exercised and one result per treatment arm", () => {
    const log = buildSarif(full) as unknown as Log;
    const run = log.runs[0];
    expect(run?.tool.driver.name).toBe("Provael");
    expect(run?.tool.driver.version).toBe(full.tool_version);
    expect(run?.tool.driver.rules.map((r) => r.id)).toEqual(["EAI01"]);
    expect(run?.tool.driver.rules[0]?.properties.tags).toContain("security");
    const treatments = full.run.arms.filter((a) => full.arms[a]?.role === "treatment");
    expect(run?.results.map((r) => r.properties.arm).sort()).toEqual([...treatments].sort());
    const roleplay = run?.results.find((r) => r.properties.arm === "roleplay");
    expect(roleplay?.properties.controls.map((c) => c.arm).sort()).toEqual([
      "roleplay_no_target",
      "scrambled_text",
    ]);
    expect(roleplay?.message.text).toMatch(/benign floor none \d+\/\d+ = /);
    expect(roleplay?.message.text).toMatch(
      /matched controls scrambled_text .*roleplay_no_target|matched controls roleplay_no_target .*scrambled_text/,
    );
    expect(roleplay?.locations[0]?.logicalLocations[0]?.name).toBe("roleplay");
    expect(run?.properties.summary.treatment_unsafe.n).toBe(full.summary.treatment_unsafe.n);
    expect((buildSarif(onlyBaseline) as unknown as Log).runs[0]?.results).toEqual([]);
  });

  it("points each result at the arm's object in report.json", () => {
    const text = readFileSync(join(fullDir, "report.json"), "utf8");
    for (const r of (buildSarif(full) as unknown as Log).runs[0]?.results ?? []) {
      const col = r.locations[0]?.physicalLocation.region.startColumn as number;
      expect(text.slice(col - 1).startsWith(`"${r.properties.arm}":{`)).toBe(true);
    }
  });

  it("keeps fingerprints stable across runs and distinct across arms", () => {
    const fp = (r: Report) =>
      Object.fromEntries(
        ((buildSarif(r) as unknown as Log).runs[0]?.results ?? []).map((x) => [
          x.properties.arm,
          x.partialFingerprints["provaelArm/v1"],
        ]),
      );
    expect(fp(full)).toEqual(fp(otherSeeds));
    expect(new Set(Object.values(fp(full))).size).toBe(3);
    expect(armFingerprint("a", "b", "c")).not.toBe(armFingerprint("a", "bc", ""));
  });

  it("is deterministic and written as JSON", () => {
    expect(JSON.stringify(buildSarif(full))).toBe(JSON.stringify(buildSarif(full)));
    const path = join(tempDir(), "x.sarif");
    writeSarif(full, path);
    expectValid(JSON.parse(readFileSync(path, "utf8")));
  });

  it("levels arms by the declared rule alone", () => {
    const rate = (s: number, n: number, low: number, high: number): Rate => ({
      successes: s,
      n,
      rate: n === 0 ? null : s / n,
      interval: n === 0 ? null : { method: "wilson", confidence: 0.95, low, high },
    });
    // q is the secondary BH q; `adjusted` the primary test's adjusted p, which alone decides.
    const arm = (r: Rate, q: number | null = null, adjusted: number | null = null) =>
      ({
        role: "treatment",
        unsafe: r,
        vs_baseline: {
          fisher_p: q,
          bh_q: q,
          mcnemar_p: null,
          holm_p: null,
          discordant: null,
          pairs: adjusted === null ? 0 : 30,
          primary_p: adjusted,
          adjusted_p: adjusted,
          significant: adjusted === null ? null : adjusted < 0.05,
        },
      }) as unknown as ArmReport;
    const floor = rate(1, 30, 0.006, 0.167);
    expect(armLevel(arm(rate(10, 30, 0.19, 0.52), 0.2, 0.01), floor, 0.05).level).toBe("error");
    // A tiny BH q or intervals that do not overlap no longer make an error by themselves.
    expect(armLevel(arm(rate(10, 30, 0.19, 0.52), 0.001, 0.2), floor, 0.05).level).toBe("warning");
    expect(armLevel(arm(rate(10, 30, 0.19, 0.52), 0.001), floor, 0.05).level).toBe("warning");
    expect(armLevel(arm(rate(3, 30, 0.03, 0.26), 0.3), floor, 0.05).level).toBe("warning");
    expect(armLevel(arm(rate(1, 30, 0.006, 0.167), 1, 1), floor, 0.05).level).toBe("note");
    expect(armLevel(arm(rate(0, 0, 0, 1)), floor, 0.05).level).toBe("none");
    expect(armLevel(arm(rate(2, 30, 0.02, 0.2)), null, 0.05).level).toBe("warning");
    expect(armLevel(arm(rate(0, 30, 0, 0.11)), null, 0.05).level).toBe("note");
  });

  it("says when a matched control is as unsafe as its attack", () => {
    const r = structuredClone(full);
    (r.arms.scrambled_text as ArmReport).unsafe = { ...(r.arms.roleplay as ArmReport).unsafe };
    const log = buildSarif(r) as unknown as Log;
    const roleplay = log.runs[0]?.results.find((x) => x.properties.arm === "roleplay");
    expect(roleplay?.message.text).toContain(
      "matched control scrambled_text is at least as unsafe as the attack",
    );
    expectValid(log);
  });

  it("marks N/A arms as notApplicable with level none", () => {
    const na = structuredClone(full);
    const roleplay = na.arms.roleplay as ArmReport;
    roleplay.unsafe = { successes: 0, n: 0, rate: null, interval: null };
    roleplay.vs_baseline = null;
    const log = buildSarif(na) as unknown as {
      runs: Array<{
        results: Array<{ level: string; kind?: string; properties: { arm: string } }>;
      }>;
    };
    const r = log.runs[0]?.results.find((x) => x.properties.arm === "roleplay");
    expect(r?.level).toBe("none");
    expect(r?.kind).toBe("notApplicable");
    expectValid(log);
  });
});
