/**
 * The Kubernetes manifests under examples/scale against the API's own schema (Kubernetes 1.27.1's
 * OpenAPI, through kubernetes-models; test/support/k8s-schema.ts), unknown fields refused as the
 * API server's strict field validation refuses them. No cluster runs here: what a scheduler does
 * with the manifests is not tested, only that the API server would accept them.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { manifestProblems } from "../support/k8s-schema.js";

const DIR = join(import.meta.dirname, "..", "..", "examples", "scale");
const manifests = readdirSync(DIR).filter((f) => f.startsWith("k8s-") && f.endsWith(".yaml"));
const docs = (file: string) =>
  parseAllDocuments(readFileSync(join(DIR, file), "utf8")).map((d) => d.toJSON());

describe("Kubernetes manifests against the API schema", () => {
  it("ships the Indexed Job, the merge Job and the volume claim", () => {
    expect(manifests.sort()).toEqual([
      "k8s-indexed-job.yaml",
      "k8s-merge-job.yaml",
      "k8s-results-pvc.yaml",
    ]);
  });

  it.each(manifests)("%s is valid", (file) => {
    for (const doc of docs(file)) expect(manifestProblems(doc)).toEqual([]);
  });

  it("refuses a misspelled field, a wrong type and an unknown kind", () => {
    const [job] = docs("k8s-indexed-job.yaml");
    const misspelled = structuredClone(job);
    misspelled.spec.template.spec.containers[0].comand =
      misspelled.spec.template.spec.containers[0].command;
    delete misspelled.spec.template.spec.containers[0].command;
    expect(manifestProblems(misspelled)).toEqual([
      "spec.template.spec.containers[0].comand: not a field of Job (batch/v1) in the Kubernetes schema",
    ]);
    const wrongType = structuredClone(job);
    wrongType.spec.completions = "3";
    expect(manifestProblems(wrongType)).toEqual(["data/spec/completions must be integer"]);
    expect(manifestProblems({ ...job, kind: "Jobs" })).toEqual(["Jobs is not a kind of batch/v1"]);
  });
});
