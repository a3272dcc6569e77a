/**
 * A pool of policy servers: one run's episodes spread over several `provael serve-policy`
 * servers (their server objects, in this process), the report the same bytes as with one server,
 * and a server lost mid-run costing no episode and counting none twice.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type RunningServer,
  type ServeProtocol,
  startPolicyServer,
} from "../../src/policies/served/server/index.js";
import { stubPolicy } from "../../src/policies/stub.js";
import { readJournal } from "../../src/rundir/journal.js";
import type { PlanSpec } from "../../src/runner/plan.js";
import type { PoolRecord } from "../../src/runner/pool.js";
import { runAttack } from "../../src/runner/run.js";
import { stubPlan } from "../support/stub-run.js";
import { tempDir } from "../support/tmp.js";

const FAST = { retries: 1, backoffMs: 10, connectTimeoutMs: 2000, timeoutMs: 5000 };

/** The stub plan, played by a served stub: two seeds, eight steps. */
const plan = (policy: string, over: Partial<PlanSpec> = {}): PlanSpec =>
  stubPlan({ policy, seeds: 2, horizon: 8, ...over });

const servers: RunningServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function serve(protocol: ServeProtocol, n: number): Promise<RunningServer[]> {
  const started: RunningServer[] = [];
  for (let i = 0; i < n; i++) {
    const s = await startPolicyServer({ policy: stubPolicy, protocol, host: "127.0.0.1", port: 0 });
    servers.push(s);
    started.push(s);
  }
  return started;
}

function run(
  p: PlanSpec,
  out: string,
  urls: string[],
  more: Partial<Parameters<typeof runAttack>[0]> = {},
) {
  return runAttack({
    plan: p,
    out,
    resume: false,
    concurrency: 2,
    policyOptions: { url: urls[0] as string, extra: FAST },
    policyUrls: urls,
    commandLine: ["test"],
    finish: { html: false },
    ...more,
  });
}

const reportBytes = (dir: string) => readFileSync(join(dir, "report.json"), "utf8");
const poolOf = (dir: string): PoolRecord =>
  JSON.parse(readFileSync(join(dir, "execution-manifest.json"), "utf8")).policy_pool;

describe("a pool of policy servers", () => {
  it.each<[string, ServeProtocol, Partial<PlanSpec>]>([
    ["openpi", "openpi", {}],
    ["openvla", "openvla", { tasks: ["grab_sponge"], seeds: 1 }],
    ["vla-eval", "vla-eval", { seeds: 1 }],
  ])(
    "over %s: 2 servers write the report bytes of 1; the manifest says who played what",
    async (policy, protocol, over) => {
      const [a, b] = await serve(protocol, 2);
      const one = tempDir();
      const two = tempDir();
      const single = await run(plan(policy, over), one, [(a as RunningServer).url]);
      expect(single.report?.arms.none?.errors).toBe(0);
      await run(plan(policy, over), two, [(a as RunningServer).url, (b as RunningServer).url]);
      expect(reportBytes(two)).toBe(reportBytes(one));

      const record = poolOf(two);
      expect(record.servers).toEqual([a?.url, b?.url]);
      expect(record.concurrency_per_server).toBe(2);
      const cells = readJournal(join(two, "journal.jsonl")).episodes.map((e) => e.record.cell);
      expect(Object.keys(record.played_by).sort()).toEqual([...cells].sort());
      // Both servers played: 2 slots each, and cells outnumber one server's slots.
      expect(record.episodes.every((n) => n > 0)).toBe(true);
      expect(record.episodes.reduce((x, y) => x + y, 0)).toBe(cells.length);
      expect(record.infrastructure_errors).toEqual([]);
    },
  );

  it("one server killed mid-run: no episode lost, none counted twice, the report bytes of an undisturbed run", async () => {
    const [a, b, c] = await serve("openpi", 3);
    const undisturbed = tempDir();
    await run(plan("openpi"), undisturbed, [(a as RunningServer).url]);

    const dir = tempDir();
    let killed = false;
    const victim = b as RunningServer;
    const result = await run(
      plan("openpi"),
      dir,
      [a, b, c].map((s) => s?.url as string),
      {
        maxErrors: 0,
        onProgress: (done) => {
          if (done >= 3 && !killed) {
            killed = true;
            servers.splice(servers.indexOf(victim), 1);
            void victim.close();
          }
        },
      },
    );
    expect(killed).toBe(true);
    expect(result.report).not.toBeNull();
    expect(reportBytes(dir)).toBe(reportBytes(undisturbed));

    // Each cell journalled once, none errored: the lost episodes were played again elsewhere.
    const episodes = readJournal(join(dir, "journal.jsonl")).episodes;
    const cells = episodes.map((e) => e.record.cell);
    expect(new Set(cells).size).toBe(cells.length);
    expect(cells.length).toBe(result.total);
    expect(episodes.filter((e) => e.record.error !== null)).toEqual([]);

    const record = poolOf(dir);
    expect(record.infrastructure_errors.length).toBeGreaterThan(0);
    for (const e of record.infrastructure_errors) {
      expect(e.server).toBe(1);
      expect(e.retried).toBe(true);
      expect(e.code).toMatch(/^policy\//);
      // The retried cell was journalled from another server.
      expect(record.played_by[e.cell]).not.toBe(1);
    }
  }, 300_000);

  it("refuses servers that serve different models, before any episode", async () => {
    const [a] = await serve("openpi", 1);
    // The same actions under another id: another model as far as the run can tell.
    const other = await startPolicyServer({
      policy: { ...stubPolicy, id: "stub-twin" },
      protocol: "openpi",
      host: "127.0.0.1",
      port: 0,
    });
    servers.push(other);
    const dir = tempDir();
    await expect(run(plan("openpi"), dir, [a?.url as string, other.url])).rejects.toMatchObject({
      code: "config/invalid",
      message: expect.stringMatching(/serve different models/),
    });
    expect(readJournal(join(dir, "journal.jsonl")).episodes).toEqual([]);
  });
});
