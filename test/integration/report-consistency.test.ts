/**
 * A report.json whose numbers contradict each other, or whose loose fields nest without end, is
 * refused by the one report reader, so by every command that reads a report (the regression
 * gate, verdict, SARIF included), and `provael view` lists its run as broken, naming the field.
 * Each case is a reproducer: accepted silently, or a stack overflow (exit 4), before.
 */
import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical-json.js";
import { ProvaelError } from "../../src/core/errors.js";
import { readRun } from "../../src/rundir/read.js";
import { parseReport } from "../../src/rundir/report.js";
import { runsPayload } from "../../src/view/api.js";
import { Catalog } from "../../src/view/catalog.js";
import { runCli } from "../support/cli.js";
import { runStub } from "../support/stub-run.js";
import { tempDir } from "../support/tmp.js";

const root = tempDir("provael-consistency-");
const good = join(root, "good");
// biome-ignore lint/suspicious/noExplicitAny: edits reach into any part of the report
type Doc = any;

/** A copy of the good run with its report edited as text (the journal removed, so the edited
 * report is what the directory holds: a copied report, read on its own). */
function variant(name: string, edit: (text: string) => string): string {
  const dir = join(root, name);
  cpSync(good, dir, { recursive: true });
  rmSync(join(dir, "journal.jsonl"));
  const path = join(dir, "report.json");
  writeFileSync(path, edit(readFileSync(path, "utf8")));
  return dir;
}
const editJson = (edit: (d: Doc) => void) => (text: string) => {
  const d = JSON.parse(text);
  edit(d);
  return JSON.stringify(d);
};

const DEEP = 100_000;
const cases: [string, (text: string) => string, string][] = [
  [
    "successes-99-of-n",
    editJson((d) => {
      d.arms.roleplay.unsafe.successes = 99;
    }),
    "arms.roleplay.unsafe.successes",
  ],
  [
    "interval-inverted",
    editJson((d) => {
      d.arms.roleplay.unsafe.interval.low = 0.9;
      d.arms.roleplay.unsafe.interval.high = 0.1;
    }),
    "arms.roleplay.unsafe.interval",
  ],
  [
    "episode-removed",
    editJson((d) => {
      const i = d.episodes.findIndex((e: Doc) => e.arm === "benign_reword");
      d.episodes.splice(i, 1);
    }),
    "arms.benign_reword.episodes",
  ],
  [
    "deep-policy-options",
    (text) =>
      text.replace(
        '"policy_options":{}',
        `"policy_options":{"x":${"[".repeat(DEEP)}1${"]".repeat(DEEP)}}`,
      ),
    "run.policy_options.x.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0",
  ],
];

beforeAll(async () => {
  await runStub(good, { tasks: ["fetch_cup", "wipe_plate"], seeds: 3 });
  for (const [name, edit] of cases) variant(name, edit);
}, 120_000);

describe("report readers check a report's numbers against each other", () => {
  it("the unedited report is read", () => {
    expect(readRun(good).state).toBe("finished");
    expect(readFileSync(join(good, "report.json"), "utf8")).toContain('"policy_options":{}');
  });

  it.each(cases)("%s: refused by the reader, naming the field", (name, _edit, field) => {
    const bytes = readFileSync(join(root, name, "report.json"));
    let err: unknown;
    try {
      parseReport(bytes, name);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ProvaelError);
    expect((err as ProvaelError).code).toBe("io/malformed");
    expect((err as ProvaelError).details.field).toBe(field);
    const read = readRun(join(root, name));
    expect(read.state).toBe("broken");
    if (read.state === "broken") expect(read.problem.field).toBe(field);
  });

  it("provael view lists each such run as broken, with the field", () => {
    const runs = runsPayload(new Catalog([root]));
    for (const [name, , field] of cases) {
      const run = runs.find((r) => r.label === name);
      expect(run?.state, name).toBe("broken");
      expect(run?.problem).toContain(`first bad field '${field}'`);
    }
    expect(runs.find((r) => r.label === "good")?.state).toBe("finished");
  });

  it("canonical JSON refuses a value nested past the bound with a ProvaelError", () => {
    let v: unknown = 1;
    for (let i = 0; i < DEEP; i++) v = [v];
    expect(() => canonicalJson(v)).toThrow(expect.objectContaining({ code: "io/malformed" }));
  });

  it.each(["successes-99-of-n", "deep-policy-options"])(
    "%s: verdict, SARIF and the regression gate exit 2, no stack trace",
    (name) => {
      const dir = join(root, name);
      const protocol = join(import.meta.dirname, "..", "..", "examples", "protocols", "smoke.json");
      for (const args of [
        ["verdict", "--in", dir, "--protocol", protocol],
        ["report", "--in", dir, "--format", "sarif"],
        ["report", "--in", good, "--baseline", join(dir, "report.json")],
      ]) {
        const r = runCli(args);
        expect(r.code, `${args.join(" ")}\n${r.stderr}`).toBe(2);
        expect(r.stderr).toContain("first bad field");
        expect(r.stderr).not.toContain("internal error");
      }
    },
  );
});
