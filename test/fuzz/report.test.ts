/**
 * report.json, fuzzed through the one reader (src/rundir/report.ts): a real stub report with
 * structural edits (values replaced, keys deleted, arrays emptied or grown) or its bytes
 * mutated. Every input is refused with a ProvaelError, or accepted, and then every consumer of a
 * report (markdown, SARIF, compliance, the verdict, the regression gate) handles it or refuses
 * it with a ProvaelError: never a TypeError on a report that passed the reader.
 *
 * Two classes the reader must refuse outright: a report whose numbers contradict each other
 * (test/support/report-contradictions.ts; 0 may be accepted), and one whose loose fields nest
 * deeper than any report Provael writes (refused with a ProvaelError, never a stack overflow in
 * canonical JSON or a consumer).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { acceptanceSchema } from "../../src/config/acceptance.js";
import { canonicalJson, MAX_JSON_DEPTH } from "../../src/core/canonical-json.js";
import { ProvaelError } from "../../src/core/errors.js";
import { buildCompliance } from "../../src/report/compliance.js";
import { renderMarkdown } from "../../src/report/markdown.js";
import { compareReports } from "../../src/report/regression.js";
import { buildSarif } from "../../src/report/sarif.js";
import { decide } from "../../src/report/verdict.js";
import { parseReport } from "../../src/rundir/report.js";
import { fuzz, mutatedBytes, mutatedJson, onlyProvaelErrors } from "../support/fuzz.js";
import { contradiction, nested } from "../support/report-contradictions.js";
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
        return onlyProvaelErrors(() => {
          const report = parseReport(b, "fuzzed report.json");
          onlyProvaelErrors(() => void renderMarkdown(report));
          onlyProvaelErrors(() => void buildSarif(report));
          onlyProvaelErrors(() => void buildCompliance(report));
          onlyProvaelErrors(() => void decide(report, protocol));
          onlyProvaelErrors(() => void compareReports(report, seed));
          onlyProvaelErrors(() => void compareReports(seed, report, { allowIncomparable: true }));
        })
          ? "refused"
          : "accepted";
      },
      0.5,
    );
  });
});

describe("report.json whose numbers contradict each other", () => {
  it("is refused by the reader, with a ProvaelError naming the field: 0 accepted", () => {
    fuzz("report.json contradictions", contradiction(JSON.parse(bytes.toString("utf8"))), (c) => {
      let refused = false;
      try {
        parseReport(Buffer.from(JSON.stringify(c.doc)), "contradicting report.json");
      } catch (e) {
        if (!(e instanceof ProvaelError)) throw e;
        expect(e.code).toBe("io/malformed");
        expect(typeof e.details.field).toBe("string");
        refused = true;
      }
      if (!refused) throw new Error(`a report with a contradiction (${c.kind}) was accepted`);
      return "refused";
    });
  });
});

describe("report.json whose loose fields nest deep", () => {
  const loose = [
    ["run", "policy_options", "x"],
    ["run", "attack_params", seed.run.arms[0] as string, "x"],
    ["episodes", 0, "error"],
  ] as const;
  it("is refused past the bound, handled below it, and canonical JSON never overflows", () => {
    fuzz(
      "report.json deep nesting",
      fc.tuple(
        fc.constantFrom(...loose),
        fc.oneof(
          fc.integer({ min: 1, max: MAX_JSON_DEPTH - 10 }),
          fc.integer({ min: MAX_JSON_DEPTH, max: 200_000 }),
        ),
        fc.boolean(),
      ),
      ([path, depth, inArrays]) => {
        const doc = JSON.parse(bytes.toString("utf8"));
        let at = doc;
        for (const k of path.slice(0, -1)) at = at[k];
        at[path[path.length - 1] as string] = "DEEP";
        // Written as text: JSON.stringify itself recurses.
        const deep = inArrays
          ? `${"[".repeat(depth)}1${"]".repeat(depth)}`
          : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
        const text = JSON.stringify(doc).replace('"DEEP"', deep);
        let report: ReturnType<typeof parseReport> | null = null;
        const refused = onlyProvaelErrors(() => {
          report = parseReport(Buffer.from(text), "deep report.json");
        });
        if (report) {
          const read = report;
          canonicalJson(read);
          onlyProvaelErrors(() => void renderMarkdown(read));
          onlyProvaelErrors(() => void buildSarif(read));
          onlyProvaelErrors(() => void compareReports(read, seed, { allowIncomparable: true }));
        }
        // The bound is the reader's: everything under it is read, nothing over it.
        expect(refused).toBe(depth + path.length > MAX_JSON_DEPTH || path[0] === "episodes");
        expect(onlyProvaelErrors(() => canonicalJson(nested(depth, inArrays)))).toBe(
          depth > MAX_JSON_DEPTH,
        );
        return refused ? "refused" : "accepted";
      },
      0.5,
    );
  });
});
