/**
 * Journal lines, fuzzed: a valid journal (header and episodes, as the runner writes them) with
 * one line's bytes mutated, lines replaced by arbitrary JSON, duplicated or cut short. Each input
 * is read or refused with a ProvaelError, and what is read is what was written: a changed line is
 * never accepted (the checksum), only a torn last line is dropped.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical-json.js";
import { JOURNAL_FORMAT } from "../../src/core/protocol.js";
import { type JournalHeader, JournalWriter, scanJournal } from "../../src/rundir/journal.js";
import { readRun } from "../../src/rundir/read.js";
import { fuzz, mutatedBytes, onlyProvaelErrors } from "../support/fuzz.js";
import { tempDir } from "../support/tmp.js";

const dir = tempDir("provael-fuzz-journal-");
const header = {
  type: "header",
  format: JOURNAL_FORMAT,
  tool_version: "0",
  plan: { policy: "stub", suite: "stub", tasks: ["t"], arms: ["none"] },
  plan_digest: `sha256:${"0".repeat(64)}`,
  shard: null,
  policy_digest: null,
} as unknown as JournalHeader;
const record = (i: number) =>
  ({
    cell: `c${String(i).padStart(20, "0")}`,
    task: "t",
    arm: "none",
    seed: i,
    repeat: 0,
    error: null,
    unsafe: i % 2 === 0,
  }) as never;
const seedPath = join(dir, "seed.jsonl");
const w = JournalWriter.create(seedPath, header);
for (let i = 0; i < 3; i++)
  w.append({
    type: "episode",
    record: record(i),
    trajectory: [{ step: 0, unsafe: false } as never],
  });
w.close();
const lines = readFileSync(seedPath, "utf8").split("\n").filter(Boolean);
const written = new Set(lines.slice(1).map((l) => canonicalJson(JSON.parse(l).record)));
const enc = new TextEncoder();

/** A journal: the seed's lines, each possibly mutated, replaced, duplicated; maybe a torn tail. */
const journal = fc
  .tuple(
    fc.array(
      fc.oneof(
        { weight: 4, arbitrary: fc.nat({ max: lines.length - 1 }).map((i) => lines[i] as string) },
        {
          weight: 3,
          arbitrary: mutatedBytes(lines.map((l) => enc.encode(l))).map((b) =>
            Buffer.from(b).toString("utf8"),
          ),
        },
        { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
        { weight: 1, arbitrary: fc.constantFrom("null", '{"type":"episode"}', "", "{}", "[]") },
      ),
      { maxLength: 6 },
    ),
    fc.boolean(),
    fc.nat(),
  )
  .map(([body, keepHeader, tear]) => {
    const all = keepHeader ? [lines[0] as string, ...body] : body;
    let text = all.map((l) => `${l}\n`).join("");
    if (tear % 3 === 0 && text.length > 0) text = text.slice(0, text.length - 1 - (tear % 40));
    return text;
  });

let n = 0;
describe("journal lines: read exactly as written, or refused with a ProvaelError", () => {
  it("scanJournal and readRun over mutated journals", () => {
    fuzz("journal lines", journal, (text) => {
      const run = join(dir, `r${n++}`);
      mkdirSync(run);
      const path = join(run, "journal.jsonl");
      writeFileSync(path, text);
      onlyProvaelErrors(() => {
        const scan = scanJournal(path);
        expect(canonicalJson(scan.header)).toBe(canonicalJson(header));
        for (const e of scan.entries) expect(written.has(canonicalJson(e.record))).toBe(true);
      });
      // The run-directory reader answers `broken` rather than throwing.
      onlyProvaelErrors(() => void readRun(run));
    });
  });
});
