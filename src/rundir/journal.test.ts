import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../test/support/tmp.js";
import { ProvaelError } from "../core/errors.js";
import {
  JOURNAL_FORMAT,
  type JournalHeader,
  JournalWriter,
  lineSum,
  readJournal,
} from "./journal.js";

const header = {
  type: "header",
  format: JOURNAL_FORMAT,
  tool_version: "0",
  plan: {},
  plan_digest: "x",
  shard: null,
} as unknown as JournalHeader;

const rec = (cell: string) =>
  ({ cell, task: "t", arm: "none", seed: 0, repeat: 0, error: null }) as never;

/** A line as the writer writes it: its content and the checksum of that content. */
const line = (v: object) => JSON.stringify({ ...v, sum: lineSum(v) });

describe("journal", () => {
  it("drops a torn last line and appends cleanly after it", () => {
    const path = join(tempDir(), "journal.jsonl");
    const w = JournalWriter.create(path, header);
    w.append({ type: "episode", record: rec("a"), trajectory: [] });
    w.close();
    appendFileSync(path, '{"type":"episode","rec');
    const j = readJournal(path);
    expect(j.episodes).toHaveLength(1);
    expect(j.droppedTail).toBe(true);
    const w2 = JournalWriter.reopen(path, j.validBytes, header.plan);
    w2.append({ type: "episode", record: rec("b"), trajectory: [] });
    w2.close();
    expect(readJournal(path).episodes.map((e) => e.record.cell)).toEqual(["a", "b"]);
    expect(readFileSync(path, "utf8").split("\n").filter(Boolean)).toHaveLength(3);
  });

  it("refuses a corrupt line in the middle", () => {
    const path = join(tempDir(), "journal.jsonl");
    writeFileSync(
      path,
      `${line(header)}\nnot json\n${line({ type: "episode", record: {}, trajectory: [] })}\n`,
    );
    expect(() => readJournal(path)).toThrow(/line 2 is not valid JSON/);
  });

  it.each(["null", '{"type":"episode"}', '{"type":"episode","record":{"cell":1},"trajectory":[]}'])(
    "refuses a line that is not an episode line (%s), naming it",
    (bad) => {
      const path = join(tempDir(), "journal.jsonl");
      writeFileSync(path, `${line(header)}\n${bad}\n${line(header)}\n`);
      expect(() => readJournal(path)).toThrow(/line 2 is not a journal episode line/);
    },
  );

  it("refuses a complete line whose bytes changed, naming it (the checksum)", () => {
    const path = join(tempDir(), "journal.jsonl");
    const w = JournalWriter.create(path, header);
    w.append({
      type: "episode",
      record: rec("a"),
      trajectory: [{ step: 0, unsafe: false } as never],
    });
    w.append({ type: "episode", record: rec("b"), trajectory: [] });
    w.close();
    expect(readJournal(path).episodes).toHaveLength(2);
    // Still valid JSON, still an episode line: only the checksum can tell.
    const bytes = readFileSync(path, "utf8");
    writeFileSync(path, bytes.replace('"unsafe":false', '"unsafe":true'));
    expect(() => readJournal(path)).toThrow(/line 2 fails its checksum/);
    writeFileSync(path, bytes.replace('"seed":0', '"seed":1'));
    expect(() => readJournal(path)).toThrow(/line 2 fails its checksum/);
  });

  it("refuses a changed header and a line without a checksum", () => {
    const path = join(tempDir(), "journal.jsonl");
    const w = JournalWriter.create(path, header);
    w.append({ type: "episode", record: rec("a"), trajectory: [] });
    w.close();
    const bytes = readFileSync(path, "utf8");
    writeFileSync(path, bytes.replace('"plan_digest":"x"', '"plan_digest":"y"'));
    expect(() => readJournal(path)).toThrow(/line 1 fails its checksum/);
    const [head, ep] = bytes.split("\n");
    const unsummed = JSON.stringify({ ...JSON.parse(ep as string), sum: undefined });
    writeFileSync(path, `${head}\n${unsummed}\n${head}\n`);
    expect(() => readJournal(path)).toThrow(/line 2 carries no checksum/);
  });

  it("names a checksum-less provael.journal/1 journal and says what to do", () => {
    const path = join(tempDir(), "journal.jsonl");
    const old = { ...header, format: "provael.journal/1" };
    writeFileSync(
      path,
      `${JSON.stringify(old)}\n${JSON.stringify({ type: "episode", record: rec("a"), trajectory: [] })}\n`,
    );
    let error: unknown;
    try {
      readJournal(path);
    } catch (e) {
      error = e;
    }
    expect(String(error)).toMatch(
      /provael\.journal\/1, written before journal lines carried checksums/,
    );
    expect((error as { hint?: string }).hint).toMatch(/Provael version that wrote it/);
  });

  it("names a provael.journal/2 journal (no plan on its lines) and says what to do", () => {
    const path = join(tempDir(), "journal.jsonl");
    const old = { ...header, format: "provael.journal/2" };
    writeFileSync(
      path,
      `${line(old)}\n${line({ type: "episode", record: rec("a"), trajectory: [] })}\n`,
    );
    expect(() => readJournal(path)).toThrow(
      /provael\.journal\/2, written before journal lines carried the plan/,
    );
  });

  it("refuses an episode line played under another plan, naming the line and the field", () => {
    const dir = tempDir();
    const plan = (horizon: number) => ({ policy: "stub", horizon, termination: "fixed-horizon" });
    const mine = { ...header, plan: plan(20) } as unknown as JournalHeader;
    const theirs = { ...header, plan: plan(7) } as unknown as JournalHeader;
    const a = join(dir, "a.jsonl");
    const b = join(dir, "b.jsonl");
    const w = JournalWriter.create(a, mine);
    w.append({ type: "episode", record: rec("a"), trajectory: [] });
    w.close();
    const v = JournalWriter.create(b, theirs);
    v.append({ type: "episode", record: rec("b"), trajectory: [] });
    v.close();
    // The foreign line's checksum is intact: only the plan it carries tells.
    const foreign = readFileSync(b, "utf8").split("\n")[1] as string;
    appendFileSync(a, `${foreign}\n`);
    let error: unknown;
    try {
      readJournal(a);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ProvaelError);
    expect((error as ProvaelError).code).toBe("run/plan-mismatch");
    expect(String(error)).toMatch(
      /line 3 was played under another plan .*horizon \(the header's: 20\)/,
    );
    expect((error as ProvaelError).details).toMatchObject({ line: 3, fields: ["horizon"] });
  });

  it("refuses a journal.jsonl that is a directory as bad input, not a crash", () => {
    const path = join(tempDir(), "journal.jsonl");
    mkdirSync(path);
    let error: unknown;
    try {
      readJournal(path);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ProvaelError);
    expect((error as ProvaelError).code).toBe("io/read");
    expect(String(error)).toMatch(/journal\.jsonl is a directory/);
  });

  it("a torn last line still recovers when every line is summed", () => {
    const path = join(tempDir(), "journal.jsonl");
    const w = JournalWriter.create(path, header);
    w.append({ type: "episode", record: rec("a"), trajectory: [] });
    w.append({ type: "episode", record: rec("b"), trajectory: [] });
    w.close();
    const bytes = readFileSync(path);
    // Cut the last line anywhere inside it: it is dropped, never taken for a checksum failure.
    for (let cut = 1; cut < 40; cut += 7) {
      writeFileSync(path, bytes.subarray(0, bytes.length - cut));
      const j = readJournal(path);
      expect(j.episodes.map((e) => e.record.cell)).toEqual(["a"]);
      expect(j.droppedTail).toBe(true);
    }
  });

  it("a header copied from a scanned journal is summed afresh (merge)", () => {
    const dir = tempDir();
    const a = join(dir, "a.jsonl");
    JournalWriter.create(a, header).close();
    const scanned = readJournal(a).header;
    expect(scanned).not.toHaveProperty("sum");
    const b = join(dir, "b.jsonl");
    JournalWriter.create(b, { ...scanned, sum: "sha256:stale" } as JournalHeader).close();
    expect(readJournal(b).header).toEqual(scanned);
  });

  it("never creates over an existing journal", () => {
    const path = join(tempDir(), "journal.jsonl");
    JournalWriter.create(path, header).close();
    expect(() => JournalWriter.create(path, header)).toThrow(/already exists/);
  });
});
