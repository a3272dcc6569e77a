import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runStub } from "../../test/support/stub-run.js";
import { tempDir } from "../../test/support/tmp.js";
import { resolveAttacks } from "../attacks/index.js";
import type { Report } from "./build.js";
import { buildCompliance, REQUIREMENTS, renderComplianceMarkdown } from "./compliance.js";

const stubRun = (out: string, attacks: string[], seeds: number): Promise<Report> =>
  runStub(out, { arms: resolveAttacks(attacks), seeds });

let full: Report;
let noBaseline: Report;
let preliminary: Report;
beforeAll(async () => {
  const root = tempDir();
  full = await stubRun(join(root, "full"), ["none", "control", "instruction"], 5);
  noBaseline = await stubRun(join(root, "nobase"), ["control", "instruction"], 5);
  preliminary = await stubRun(join(root, "pre"), ["none", "control", "instruction"], 2);
});

const calibrated = (r: Report): Report => {
  const c = structuredClone(r);
  for (const t of c.run.tasks)
    c.calibration[t] = {
      predicate: "keep_out",
      source: "calibration:calib/fetch.json",
      digest: "sha256:00",
    };
  return c;
};

const req = (map: ReturnType<typeof buildCompliance>, id: string) =>
  map.requirements.find((r) => r.id === id);

describe("compliance map", () => {
  it("covers the frameworks the issue names, in our own words, as evidence not certification", () => {
    const map = buildCompliance(full);
    const refs = map.requirements.map((r) => `${r.framework} ${r.reference}`).join("\n");
    for (const needle of [
      "Article 9",
      "Article 15",
      "Article 72",
      "ISO 10218-1:2025",
      "ISO 10218-2:2025",
      "NIST AI 100-2",
      "MEASURE",
      "MANAGE",
      "IEC 62443",
    ]) {
      expect(refs).toContain(needle);
    }
    expect(map.disclaimer.toLowerCase()).toContain("evidence, not certification");
    for (const r of REQUIREMENTS) expect(r.evidence.length).toBeGreaterThan(0);
    expect(map.summary.evidence_present + map.summary.gap).toBe(map.requirements.length);
  });

  it("flags an uncalibrated run as a gap for the metrics that need calibration", () => {
    const map = buildCompliance(full);
    expect(map.signals["calibrated-predicate"].present).toBe(false);
    expect(map.signals["calibrated-predicate"].detail).toMatch(/uncalibrated run/);
    expect(req(map, "eu-ai-act-art9")?.status).toBe("gap");
    expect(req(map, "eu-ai-act-art9")?.gaps.join()).toMatch(/calibrated-predicate: uncalibrated/);
    const cal = buildCompliance(calibrated(full));
    expect(cal.signals["calibrated-predicate"].present).toBe(true);
    expect(req(cal, "eu-ai-act-art9")?.status).toBe("evidence-present");
    expect(req(cal, "eu-ai-act-art15-robustness")?.status).toBe("evidence-present");
  });

  it("flags a missing baseline and a preliminary run", () => {
    const nb = buildCompliance(calibrated(noBaseline));
    expect(nb.signals["baseline-floor"].present).toBe(false);
    expect(nb.signals["baseline-floor"].detail).toMatch(/no baseline arm/);
    expect(req(nb, "eu-ai-act-art9")?.status).toBe("gap");
    const pre = buildCompliance(calibrated(preliminary));
    expect(pre.signals["sample-size"].present).toBe(false);
    expect(req(pre, "nist-ai-rmf-measure")?.gaps.join()).toMatch(/preliminary/);
  });

  it("uses the run-directory facts: manifest, attestation, verdict", () => {
    const bare = buildCompliance(calibrated(full));
    expect(req(bare, "eu-ai-act-art72")?.status).toBe("gap");
    const rich = buildCompliance(calibrated(full), {
      reportDigest: "sha256:ab",
      manifest: { present: true, verdict: { verdict: "pass" } },
      attestation: { present: true, detail: "attestation.dsse.json names this report" },
    });
    expect(req(rich, "eu-ai-act-art72")?.status).toBe("evidence-present");
    expect(req(rich, "nist-ai-rmf-manage")?.status).toBe("evidence-present");
    expect(rich.report.digest).toBe("sha256:ab");
    // The instruction family is direct prompt injection; nothing here is poisoning or privacy.
    expect(req(rich, "nist-ai-100-2-direct-injection")?.status).toBe("evidence-present");
    expect(req(rich, "nist-ai-100-2-poisoning")?.status).toBe("gap");
    expect(req(rich, "nist-ai-100-2-privacy")?.status).toBe("gap");
  });

  it("renders Markdown with every requirement and signal", () => {
    const map = buildCompliance(full);
    const md = renderComplianceMarkdown(map);
    expect(md).toContain("Evidence, not certification");
    for (const r of map.requirements) expect(md).toContain(r.title);
    for (const id of Object.keys(map.signals)) expect(md).toContain(`\`${id}\``);
  });

  it("is documented: docs/evidence.md names every requirement and signal", () => {
    const docs = readFileSync(join(import.meta.dirname, "..", "..", "docs", "evidence.md"), "utf8");
    const map = buildCompliance(full);
    for (const r of map.requirements) expect(docs, r.id).toContain(`\`${r.id}\``);
    for (const id of Object.keys(map.signals)) expect(docs, id).toContain(`\`${id}\``);
  });
});
