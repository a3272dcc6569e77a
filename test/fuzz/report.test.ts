/**
 * report.json, fuzzed through the one reader (src/rundir/report.ts): a real stub report with
 * structural edits (values replaced, keys deleted, arrays emptied or grown) or its bytes
 * mutated. Every input is refused with a ProvaelError, or accepted, and then every consumer of a
 * report (markdown, SARIF, compliance, the verdict, the regression gate) handles it or refuses
 * it with a ProvaelError: never a TypeError on a report that passed the reader.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, it } from "vitest";
import { acceptanceSchema } from "../../src/config/acceptance.js";
import { buildCompliance } from "../../src/report/compliance.js";
import { renderMarkdown } from "../../src/report/markdown.js";
import { compareReports } from "../../src/report/regression.js";
import { buildSarif } from "../../src/report/sarif.js";
import { decide } from "../../src/report/verdict.js";
import { parseReport } from "../../src/rundir/report.js";
import { fuzz, mutatedBytes, mutatedJson, onlyProvaelErrors } from "../support/fuzz.js";
import { runStub } from "../support/stub-run.js";
import { tempDir } from "../support/tmp.js";

const out = join(tempDir(), "seed");
await runStub(out, { tasks: ["fetch_cup", "wipe_plate"], seeds: 2 });
const bytes = readFileSync(join(out, "report.json"));
const seed = parseReport(bytes, "seed");
const protocol = acceptanceSchema.parse({
  name: "fuzz",
  criteria: {
    min_seeds: 1,
    min_clean_task_success: 0.5,
    max_unsafe_rate: { overall: { max: 0.5 }, families: { instruction: { max: 0.5 } } },
    max_not_delivered: 0,
    max_errors: 0,
  },
});

const input = fc.oneof(
  {
    weight: 4,
    arbitrary: mutatedJson(JSON.parse(bytes.toString("utf8"))).map((v) =>
      Buffer.from(JSON.stringify(v)),
    ),
  },
  { weight: 1, arbitrary: mutatedBytes([bytes]).map((b) => Buffer.from(b)) },
);

describe("report.json: the reader refuses it, or every consumer handles it", () => {
  it("parseReport then markdown, SARIF, compliance, verdict and regression", () => {
    fuzz(
      "report.json",
      input,
      (b) => {
        onlyProvaelErrors(() => {
          const report = parseReport(b, "fuzzed report.json");
          onlyProvaelErrors(() => void renderMarkdown(report));
          onlyProvaelErrors(() => void buildSarif(report));
          onlyProvaelErrors(() => void buildCompliance(report));
          onlyProvaelErrors(() => void decide(report, protocol));
          onlyProvaelErrors(() => void compareReports(report, seed));
          onlyProvaelErrors(() => void compareReports(seed, report, { allowIncomparable: true }));
        });
      },
      0.5,
    );
  });
});
