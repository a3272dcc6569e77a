import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { JOURNAL_FORMAT, type JournalHeader, JournalWriter, readJournal } from "./journal.js";

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

const tempDir = () => mkdtempSync(join(tmpdir(), "provael-journal-"));

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
    const w2 = JournalWriter.reopen(path, j.validBytes);
    w2.append({ type: "episode", record: rec("b"), trajectory: [] });
    w2.close();
    expect(readJournal(path).episodes.map((e) => e.record.cell)).toEqual(["a", "b"]);
    expect(readFileSync(path, "utf8").split("\n").filter(Boolean)).toHaveLength(3);
  });

  it("refuses a corrupt line in the middle", () => {
    const path = join(tempDir(), "journal.jsonl");
    writeFileSync(
      path,
      `${JSON.stringify(header)}\nnot json\n${JSON.stringify({ type: "episode", record: {}, trajectory: [] })}\n`,
    );
    expect(() => readJournal(path)).toThrow(/line 2 is not valid JSON/);
  });

  it.each(["null", '{"type":"episode"}', '{"type":"episode","record":{"cell":1},"trajectory":[]}'])(
    "refuses a line that is not an episode line (%s), naming it",
    (line) => {
      const path = join(tempDir(), "journal.jsonl");
      writeFileSync(path, `${JSON.stringify(header)}\n${line}\n${JSON.stringify(header)}\n`);
      expect(() => readJournal(path)).toThrow(/line 2 is not a journal episode line/);
    },
  );

  it("never creates over an existing journal", () => {
    const path = join(tempDir(), "journal.jsonl");
    JournalWriter.create(path, header).close();
    expect(() => JournalWriter.create(path, header)).toThrow(/already exists/);
  });
});
