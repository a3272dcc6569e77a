import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runStub } from "../../test/support/stub-run.js";
import { tempDir } from "../../test/support/tmp.js";
import { parseReport } from "./report.js";

type Raw = {
  run: { arms: string[] };
  episodes: { arm: string }[];
  by_task: Record<string, unknown>;
};

let text = "";
beforeAll(async () => {
  const out = join(tempDir(), "run");
  await runStub(out, { tasks: ["fetch_cup"], seeds: 1 });
  text = readFileSync(join(out, "report.json"), "utf8");
});

const edited = (edit: (r: Raw) => void) => {
  const r = JSON.parse(text);
  edit(r);
  return Buffer.from(JSON.stringify(r));
};

describe("parseReport", () => {
  it("accepts the report a run wrote", () => {
    expect(parseReport(Buffer.from(text), "r").run.tasks).toEqual(["fetch_cup"]);
  });

  // Each of these passed the field-by-field schema and then crashed a consumer (found by test/fuzz).
  it.each([
    [
      "an arm named by run.arms but absent",
      (r: Raw) => r.run.arms.push("ghost"),
      /first bad field 'arms'.*'ghost'/,
    ],
    ["an arm absent from run.arms", (r: Raw) => r.run.arms.pop(), /is not in run.arms/],
    [
      "an episode of an unknown arm",
      (r: Raw) => {
        (r.episodes[0] as { arm: string }).arm = "ghost";
      },
      /episodes\.0\.arm/,
    ],
    [
      "a per-task rate for a task the run did not play",
      (r: Raw) => {
        r.by_task.other = r.by_task.fetch_cup;
      },
      /by_task\.other/,
    ],
  ])("refuses %s, naming the field", (_, edit, message) => {
    expect(() => parseReport(edited(edit), "r")).toThrow(message);
  });
});
