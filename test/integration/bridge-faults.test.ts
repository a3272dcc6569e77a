/**
 * The bridge under faults, in process: a benchmark that drops mid-episode, a second
 * EPISODE_START, garbage frames, an upstream that dies and comes back, 200 connections at once,
 * and the pairing check refusing arms whose first observations differ.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { refusalLine, refusalText } from "../../src/bridge/refusal.js";
import { reportFromBridgeJournal } from "../../src/bridge/rundir.js";
import type { BridgeEvent } from "../../src/bridge/server.js";
import { canonicalJson } from "../../src/core/canonical-json.js";
import { uint8Array } from "../../src/policies/served/codec/ndarray.js";
import { wireMap } from "../../src/policies/served/codec/tree.js";
import { startPolicyServer } from "../../src/policies/served/server/index.js";
import { stubPolicy } from "../../src/policies/stub.js";
import { arm, bridge, closeOpen, journalled, open, Peer, records } from "../support/bridge.js";

afterEach(closeOpen);

describe("provael bridge under faults", () => {
  it("records a dropped benchmark's episode as an error and keeps serving", async () => {
    const { b, out } = await bridge("stub", ["none"]);
    const p = await Peer.open(arm(b, "none"));
    expect((await p.hello()).type).toBe("hello");
    p.start("bowl", 0);
    expect((await p.observe(0.1)).type).toBe("action");
    p.kill();
    const q = await Peer.open(arm(b, "none"));
    await q.hello();
    q.start("bowl", 0);
    expect((await q.observe(0.1)).type).toBe("action");
    expect((await q.observe(0.2)).type).toBe("action");
    q.end(true);
    q.close();
    await journalled(b, 2);
    // What `provael report --in` builds from the journal of a bridge that was killed now.
    const fromJournal = reportFromBridgeJournal(out);
    const result = await b.close();
    expect(canonicalJson(result.report)).toBe(canonicalJson(fromJournal));
    const rs = records(out);
    expect(rs.map((r) => r.error?.code ?? null)).toEqual(["run/incomplete", null]);
    // The errored episode freed its repeat: the replay is the same cell and supersedes it.
    expect(rs[0]?.cell).toBe(rs[1]?.cell);
    expect(result.report.arms.none?.episodes).toBe(1);
    expect(result.report.arms.none?.task_success.successes).toBe(1);
    expect(result.report.run.bridge?.profile).toBe("libero");
    expect(result.report.run.tasks).toEqual(["libero_spatial/bowl"]);
  });

  it("records an episode that a second EPISODE_START interrupts as an error", async () => {
    const { b, out } = await bridge("stub", ["none"]);
    const p = await Peer.open(arm(b, "none"));
    await p.hello();
    p.start("bowl", 0);
    await p.observe(0.1);
    p.start("bowl", 1);
    expect((await p.observe(0.1)).type).toBe("action");
    expect((await p.observe(0.1)).type).toBe("action");
    p.end(false);
    p.close();
    await journalled(b, 2);
    await b.close();
    const rs = records(out);
    expect(rs.map((r) => [r.seed, r.error?.code ?? null, r.unsafe])).toEqual([
      [0, "run/incomplete", null],
      [1, null, false],
    ]);
    // One step judged: the first action's after-state (the second observation); the last
    // action's after-state never came, so that step stays unjudged.
    expect(rs[1]?.judged_steps).toBe(1);
    // Stock LIBERO sends no contacts: only the keep-out scores it.
    expect(Object.keys(rs[1]?.endpoints ?? {})).toEqual(["keep_out"]);
  });

  it("answers garbage frames with ERROR and keeps the connection open", async () => {
    const { b } = await bridge("stub", ["none"]);
    const p = await Peer.open(arm(b, "none"));
    p.ws.send(Buffer.from([0xc1, 0xff, 0x00, 0x13]));
    const e1 = await p.next();
    expect(e1.type).toBe("error");
    expect(String(e1.payload.error)).toMatch(/^decode_failed/);
    p.ws.send("not binary");
    expect((await p.next()).type).toBe("error");
    // A well-formed frame of a type a benchmark never sends.
    const bad = wireMap();
    p.send("action", bad);
    expect(String((await p.next()).payload.error)).toMatch(/^unexpected_message/);
    expect((await p.hello()).type).toBe("hello");
    p.start("bowl", 0);
    expect((await p.observe(0.1)).type).toBe("action");
    p.close();
  });

  it("turns a dead upstream into ERROR replies and error episodes, and recovers when it returns", async () => {
    let upstream = await startPolicyServer({
      policy: stubPolicy,
      protocol: "vla-eval",
      host: "127.0.0.1",
      port: 0,
    });
    const port = upstream.port;
    const { b, out } = await bridge("vla-eval", ["none"], { connectTimeoutMs: 1000 }, upstream.url);
    const p = await Peer.open(arm(b, "none"));
    await p.hello();
    p.start("bowl", 0);
    expect((await p.observe(0.1)).type).toBe("action");
    await upstream.close();
    const t0 = Date.now();
    const dead = await p.observe(0.2);
    expect(dead.type).toBe("error");
    expect(Date.now() - t0).toBeLessThan(8000);
    // The next episode fails to start while the upstream is down, and says so.
    p.start("bowl", 1);
    const refused = await p.next();
    expect(refused.type).toBe("error");
    expect(String(refused.payload.error)).toMatch(/^episode_start_failed/);
    upstream = await startPolicyServer({
      policy: stubPolicy,
      protocol: "vla-eval",
      host: "127.0.0.1",
      port,
    });
    open.push(upstream);
    p.start("bowl", 2);
    expect((await p.observe(0.1)).type).toBe("action");
    p.end(false);
    p.close();
    await journalled(b, 3);
    await b.close();
    const rs = records(out);
    expect(rs.map((r) => [r.seed, r.error === null])).toEqual([
      [0, false],
      [1, false],
      [2, true],
    ]);
  }, 30_000);

  it("serves 200 connections at once", async () => {
    const { b, out } = await bridge("stub", ["none", "roleplay"]);
    const peers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => Peer.open(arm(b, i % 2 === 0 ? "none" : "roleplay"))),
    );
    const hellos = await Promise.all(peers.map((p) => p.hello()));
    expect(hellos.every((h) => h.type === "hello")).toBe(true);
    await Promise.all(
      peers.map(async (p, i) => {
        p.start("bowl", Math.floor(i / 2));
        const a = await p.observe(0.1);
        expect(a.type).toBe("action");
        expect(a.seq).toBe(p.seq);
        p.end(false);
      }),
    );
    const health = await fetch(`${b.url.replace("ws:", "http:")}/health`);
    expect(health.status).toBe(200);
    for (const p of peers) p.close();
    await journalled(b, 200);
    const result = await b.close();
    expect(records(out)).toHaveLength(200);
    expect(result.report.arms.none?.episodes).toBe(100);
    expect(result.report.arms.roleplay?.vs_baseline).not.toBeNull();
  }, 60_000);

  it("refuses an arm whose first observation differs, keeps every good episode and accepts the cell again", async () => {
    const events: BridgeEvent[] = [];
    const { b, out } = await bridge("stub", ["none", "roleplay"], {}, undefined, {
      onEvent: (e) => events.push(e),
    });
    const p = await Peer.open(arm(b, "none"));
    await p.hello();
    p.start("bowl", 0);
    await p.observe(0.1, 7);
    p.end(false);
    await journalled(b, 1);
    const q = await Peer.open(arm(b, "roleplay"));
    await q.hello();
    q.start("bowl", 0);
    const refused = await q.observe(0.1, 9);
    expect(refused.type).toBe("error");
    expect(String(refused.payload.error)).toMatch(/scene-mismatch/);
    await journalled(b, 2);
    // The same cell played again from the right scene is accepted: the refused episode fixed
    // no scene and kept no repeat number.
    q.start("bowl", 0);
    expect((await q.observe(0.1, 7)).type).toBe("action");
    q.end(true);
    await journalled(b, 3);
    p.close();
    q.close();
    const result = await b.close();
    const rs = records(out);
    expect(rs.map((r) => [r.arm, r.repeat, r.error?.code ?? null])).toEqual([
      ["none", 0, null],
      ["roleplay", 0, "run/scene-mismatch"],
      ["roleplay", 0, null],
    ]);
    expect(rs[1]?.cell).toBe(rs[2]?.cell);
    expect(result.report.arms.roleplay?.episodes).toBe(1);
    expect(result.report.arms.roleplay?.task_success.successes).toBe(1);
    // Both sides read the same words: the ERROR payload, the event and refusals.jsonl.
    const refusal = events.find((e) => e.type === "refusal");
    expect(refusal?.type === "refusal" && refusalText(refusal.refusal)).toBe(
      String(refused.payload.error),
    );
    const lines = readFileSync(join(out, "refusals.jsonl"), "utf8").trim().split("\n");
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({
        what: "observation_failed",
        code: "run/scene-mismatch",
        route: "roleplay",
        connection: 2,
        task: "libero_spatial/bowl",
        seed: 0,
      }),
    ]);
    expect(events.filter((e) => e.type === "episode")).toHaveLength(3);
    // `provael report --in` builds the same report from the journal.
    expect(canonicalJson(reportFromBridgeJournal(out))).toBe(canonicalJson(result.report));
  });

  it("refuses an observation without what the profile promises and reports every good episode", async () => {
    const { b, out } = await bridge("stub", ["none"]);
    const p = await Peer.open(arm(b, "none"));
    await p.hello();
    p.start("bowl", 0);
    expect((await p.observe(0.1)).type).toBe("action");
    p.send("observation", wireMap());
    const refused = await p.next();
    expect(refused.type).toBe("error");
    expect(String(refused.payload.error)).toMatch(
      /^observation_failed: policy\/protocol: observation: lacks images\.agentview .*not forwarded/,
    );
    await journalled(b, 1);
    // Observations with no pose are refused too, before the policy sees them.
    p.start("bowl", 1);
    const noPose = wireMap();
    const images = wireMap();
    images.agentview = uint8Array(new Uint8Array(8 * 8 * 3).fill(7), [8, 8, 3]);
    noPose.images = images;
    p.send("observation", noPose);
    expect(String((await p.next()).payload.error)).toMatch(
      /lacks 'states' with at least 3 numbers/,
    );
    await journalled(b, 2);
    // The cell of the first refused episode plays again and is accepted.
    p.start("bowl", 0);
    expect((await p.observe(0.1)).type).toBe("action");
    expect((await p.observe(0.2)).type).toBe("action");
    p.end(true);
    await journalled(b, 3);
    p.close();
    const result = await b.close();
    const rs = records(out);
    expect(rs.map((r) => [r.seed, r.repeat, r.error?.code ?? null])).toEqual([
      [0, 0, "policy/protocol"],
      [1, 0, "policy/protocol"],
      [0, 0, null],
    ]);
    // Two cells: seed 0 (its replay superseded the refused episode) and seed 1 (errored).
    expect(result.report.arms.none?.episodes).toBe(2);
    expect(result.report.arms.none?.errors).toBe(1);
    expect(result.report.arms.none?.task_success.successes).toBe(1);
  });

  it("refuses an unknown benchmark with the same words on both sides", async () => {
    const events: BridgeEvent[] = [];
    const { b, out } = await bridge("stub", ["none"], {}, undefined, {
      onEvent: (e) => events.push(e),
    });
    const p = await Peer.open(arm(b, "none"));
    const hello = wireMap();
    hello.protocol_version = 1;
    hello.benchmark = "my_lab.bench:UnknownBenchmark";
    p.send("hello", hello);
    const reply = await p.next();
    expect(reply.type).toBe("error");
    const said = String(reply.payload.error);
    expect(said).toMatch(
      /^hello_failed: config\/invalid: .*my_lab\.bench:UnknownBenchmark.*\(hint: /,
    );
    const r = events.find((e) => e.type === "refusal");
    expect(r?.type).toBe("refusal");
    if (r?.type !== "refusal") return;
    expect(refusalText(r.refusal)).toBe(said);
    expect(refusalLine(r.refusal)).toBe(`refused on connection 1 (arm none): ${said}`);
    p.close();
    await b.close();
    const recorded = JSON.parse(readFileSync(join(out, "refusals.jsonl"), "utf8"));
    expect(refusalText(recorded)).toBe(said);
  });

  it("refuses an address that names no arm, and records it", async () => {
    const { b, out } = await bridge("stub", ["none"]);
    await expect(Peer.open(`${b.url}/arms/nonexistent`)).rejects.toThrow(/404/);
    await b.close();
    const recorded = JSON.parse(readFileSync(join(out, "refusals.jsonl"), "utf8"));
    expect(recorded).toMatchObject({ what: "unknown_arm", route: null, code: "config/invalid" });
    expect(recorded.hint).toContain("/arms/none");
  });
});
