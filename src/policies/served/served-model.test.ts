/**
 * A served run names the model behind the server: each client keeps what the in-repo server
 * reported, the run records it (journal header and `run.served_model`), and the leaderboard lists
 * the run under it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runStub, stubPlan } from "../../../test/support/stub-run.js";
import { tempDir } from "../../../test/support/tmp.js";
import { registeredEvidence } from "../../config/plugins.js";
import { sha256 } from "../../core/digest.js";
import { buildLeaderboard } from "../../evidence/leaderboard.js";
import type { Report } from "../../report/build.js";
import { reportSchema } from "../../rundir/schema/report.js";
import { runAttack } from "../../runner/run.js";
import { policies } from "../index.js";
import { stubPolicy } from "../stub.js";
import { servedModelOf } from "./common.js";
import { type RunningServer, SERVE_PROTOCOLS, startPolicyServer } from "./server/index.js";

const servers = new Map<string, RunningServer>();
let stubDigest: string | null;

beforeAll(async () => {
  const local = await stubPolicy.load({});
  stubDigest = local.digest ?? null;
  await local.close();
  for (const protocol of SERVE_PROTOCOLS) {
    servers.set(
      protocol,
      await startPolicyServer({ policy: stubPolicy, protocol, host: "127.0.0.1", port: 0 }),
    );
  }
});

afterAll(async () => {
  for (const s of servers.values()) await s.close();
});

describe("the served model", () => {
  it.each(SERVE_PROTOCOLS)("%s: the client keeps what provael serve-policy reported", async (p) => {
    const inst = await policies.get(p).load({ url: (servers.get(p) as RunningServer).url });
    try {
      expect(inst.servedModel).toEqual({ protocol: p, name: "stub", digest: stubDigest });
    } finally {
      await inst.close();
    }
  });

  it("is read from the usual keys of other servers, and null where they say nothing", () => {
    expect(
      servedModelOf(
        "openpi",
        { model_name: "pi05_libero", checkpoint_digest: "sha256:ab" },
        undefined,
      ),
    ).toEqual({ protocol: "openpi", name: "pi05_libero", digest: "sha256:ab" });
    expect(servedModelOf("vla-eval", { harness_version: "1" }, undefined, "OpenVLAServer")).toEqual(
      {
        protocol: "vla-eval",
        name: "OpenVLAServer",
        digest: null,
      },
    );
    expect(servedModelOf("openvla", undefined, undefined)).toEqual({
      protocol: "openvla",
      name: null,
      digest: null,
    });
    // A name is a label: long or non-string values are cut or ignored.
    const long = servedModelOf("openpi", { model: "x".repeat(500), digest: 7 }, undefined);
    expect(long.name).toHaveLength(200);
    expect(long.digest).toBeNull();
  });

  it("is recorded by a served run and names its leaderboard rows", async () => {
    const dir = tempDir();
    const url = (servers.get("openpi") as RunningServer).url;
    await runAttack({
      plan: stubPlan({ policy: "openpi", seeds: 2, horizon: 6, policy_options: { url } }),
      out: join(dir, "served"),
      resume: false,
      concurrency: 2,
      policyOptions: { url },
      commandLine: ["test"],
    });
    const report = JSON.parse(readFileSync(join(dir, "served", "report.json"), "utf8")) as Report;
    const served = { protocol: "openpi", name: "stub", digest: stubDigest };
    expect(report.run.served_model).toEqual(served);
    expect(reportSchema.parse(report).run.served_model).toEqual(served);
    const header = JSON.parse(
      readFileSync(join(dir, "served", "journal.jsonl"), "utf8").split("\n")[0] as string,
    );
    expect(header.served_model).toEqual(served);

    const local = await runStub(join(dir, "local"), { seeds: 2, horizon: 6 });
    expect(local.run.served_model).toBeUndefined();
    const board = buildLeaderboard(
      [
        { report, dir: join(dir, "served") },
        { report: local, dir: join(dir, "local") },
      ].map((r) => ({ ...r, digest: sha256(JSON.stringify(r.report)) })),
      registeredEvidence,
    );
    const servedRows = board.rows.filter((r) => r.policy === "openpi");
    expect(servedRows.length).toBeGreaterThan(0);
    for (const r of servedRows) {
      expect(r.model).toBe("stub");
      expect(r.model_note).toBeNull();
      expect(r.policy_digest).toBe(stubDigest);
    }
    // The same model served and in process are different plans: never pooled together.
    const localRows = board.rows.filter((r) => r.policy === "stub");
    expect(localRows.length).toBe(servedRows.length);
    expect(new Set(localRows.map((r) => r.plan))).not.toEqual(
      new Set(servedRows.map((r) => r.plan)),
    );

    // A served report without a reported name is listed under the policy id, with a note.
    const unnamed = structuredClone(report);
    unnamed.run.served_model = { protocol: "openpi", name: null, digest: null };
    const fallback = buildLeaderboard(
      [{ report: unnamed, dir: join(dir, "served"), digest: sha256("unnamed") }],
      registeredEvidence,
    ).rows;
    expect(fallback.every((r) => r.model === "openpi")).toBe(true);
    expect(fallback[0]?.model_note).toMatch(/reported no model name/);
  });
});
