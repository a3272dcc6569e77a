/**
 * Hostile peers, both ways. Servers: frames that are small in bytes but huge in decoded objects
 * (tens of millions of empty maps, a 30M-entry map, a JSON array of `{}`) are refused with each
 * protocol's error, the server stays up and answers the next good request. Clients: a server
 * that sends two replies per request, or floods frames nobody asked for, fails the episode with
 * a protocol error instead of pairing the extra frame with a later request.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type WebSocket, WebSocketServer } from "ws";
import { resolveAttacks } from "../../src/attacks/index.js";
import { float32Array } from "../../src/policies/served/codec/ndarray.js";
import { decodeOpenpi, encodeOpenpi } from "../../src/policies/served/codec/openpi.js";
import { decodeEnvelope, encodeEnvelope } from "../../src/policies/served/codec/vla-eval.js";
import { openpiPolicy } from "../../src/policies/served/openpi.js";
import {
  type RunningServer,
  type ServeProtocol,
  startPolicyServer,
} from "../../src/policies/served/server/index.js";
import { OPENPI_ERROR_REASON } from "../../src/policies/served/server/openpi-server.js";
import { vlaEvalPolicy } from "../../src/policies/served/vla-eval.js";
import { stubPolicy } from "../../src/policies/stub.js";
import { readJournal } from "../../src/rundir/journal.js";
import { runAttack } from "../../src/runner/run.js";
import { emptyMaps, hugeMap } from "../support/hostile-frames.js";
import { EPISODE, FAST, goodRequest, OBS } from "../support/served-client.js";
import { tempDir } from "../support/tmp.js";

const servers: RunningServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function serve(protocol: ServeProtocol): Promise<RunningServer> {
  const s = await startPolicyServer({ policy: stubPolicy, protocol, host: "127.0.0.1", port: 0 });
  servers.push(s);
  return s;
}

async function openWs(url: string): Promise<{ ws: WebSocket; frames: Buffer[]; texts: string[] }> {
  const { WebSocket } = await import("ws");
  const ws = new WebSocket(url, { maxPayload: 128 * 1024 * 1024 });
  const frames: Buffer[] = [];
  const texts: string[] = [];
  ws.on("message", (d: Buffer, binary: boolean) => {
    if (binary) frames.push(d);
    else texts.push(d.toString("utf8"));
  });
  await new Promise((r) => ws.once("open", r));
  return { ws, frames, texts };
}

const until = async (cond: () => boolean, ms = 10_000) => {
  const t0 = performance.now();
  while (!cond()) {
    if (performance.now() - t0 > ms) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe("servers refuse amplification frames and stay up", () => {
  it.each([
    ["20M empty maps", () => emptyMaps(20_000_000)],
    ["a 30M-entry map", () => hugeMap(30_000_000)],
  ])("openpi, %s: text error + close 1011, then a good request is answered", async (_, make) => {
    const server = await serve("openpi");
    const { ws, texts } = await openWs(server.url);
    const closed = new Promise<{ code: number; reason: string }>((r) =>
      ws.on("close", (code, reason) => r({ code, reason: reason.toString() })),
    );
    ws.send(make());
    expect(await closed).toEqual({ code: 1011, reason: OPENPI_ERROR_REASON });
    expect(texts.join("")).toMatch(/maxElements/);
    expect(await goodRequest("openpi", server.url)).toBe(7);
  });

  it.each([
    ["20M empty maps", () => emptyMaps(20_000_000)],
    ["a 30M-entry map", () => hugeMap(30_000_000)],
  ])("vla-eval, %s: an error frame, the same connection answers hello", async (_, make) => {
    const server = await serve("vla-eval");
    const { ws, frames } = await openWs(server.url);
    ws.send(make());
    await until(() => frames.length >= 1);
    const err = decodeEnvelope(frames[0] as Buffer);
    expect(err.type).toBe("error");
    expect(String(err.payload.error)).toMatch(/^decode_failed: .*maxElements/);
    ws.send(
      encodeEnvelope({
        type: "hello",
        payload: { harness_version: "t", protocol_version: 1 },
        seq: 1,
        timestamp: 0,
      }),
    );
    await until(() => frames.length >= 2);
    expect(decodeEnvelope(frames[1] as Buffer)).toMatchObject({ type: "hello", seq: 1 });
    ws.close();
    expect(await goodRequest("vla-eval", server.url)).toBe(7);
  });

  it("openvla, a 57 MB JSON array of {}: 413, then a good request is answered", async () => {
    const server = await serve("openvla");
    const body = `[${"{},".repeat(19_000_000)}{}]`;
    const res = await fetch(`${server.url}/act`, { method: "POST", body });
    expect(res.status).toBe(413);
    expect(await res.text()).toMatch(/maxElements/);
    expect(await goodRequest("openvla", server.url)).toBe(7);
  });

  it("openpi: a peer that pipelines frames is paused, not buffered", async () => {
    // Eight 4 MB requests back to back, none read: the server holds at most a frame's worth.
    const server = await startPolicyServer({
      policy: stubPolicy,
      protocol: "openpi",
      host: "127.0.0.1",
      port: 0,
      maxFrameBytes: 8 * 1024 * 1024,
    });
    servers.push(server);
    const { ws, frames } = await openWs(server.url);
    await until(() => frames.length >= 1); // metadata
    const filler = new Uint8Array(4 * 1024 * 1024);
    const req = encodeOpenpi({
      "observation/state": float32Array(new Float32Array(8), [8]),
      prompt: "move to the cup",
      pad: filler,
    } as never);
    for (let i = 0; i < 8; i++) ws.send(req);
    await until(() => frames.length >= 9, 20_000);
    // Every request answered, in order: pausing is backpressure, not refusal.
    for (const f of frames.slice(1)) expect(decodeOpenpi(f)).toHaveProperty("actions");
    ws.close();
  });
});

/** A raw websocket peer that answers each message with `reply`'s frames. */
async function fakeServer(
  onConnect: (ws: WebSocket) => void,
  reply: (ws: WebSocket, req: Buffer) => void,
): Promise<{ url: string; close: () => Promise<void> }> {
  const http = createServer();
  const wss = new WebSocketServer({ server: http });
  wss.on("connection", (ws) => {
    onConnect(ws);
    ws.on("message", (d: Buffer) => reply(ws, d));
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  const port = (http.address() as AddressInfo).port;
  return {
    url: `ws://127.0.0.1:${port}`,
    close: async () => {
      for (const c of wss.clients) c.terminate();
      await new Promise((r) => http.close(r));
    },
  };
}

const ACTION = encodeOpenpi({ actions: float32Array(new Float32Array(7), [1, 7]) });

describe("clients refuse frames nobody asked for", () => {
  it("openpi: a server that sends two replies per request fails episodes, none is judged on a stray action", async () => {
    const fake = await fakeServer(
      (ws) => ws.send(Uint8Array.of(0x80)),
      (ws) => {
        ws.send(ACTION);
        ws.send(ACTION);
      },
    );
    try {
      const dir = tempDir();
      const result = await runAttack({
        plan: {
          policy: "openpi",
          suite: "stub",
          tasks: ["fetch_cup"],
          arms: resolveAttacks(["none"]),
          seed: 0,
          seeds: 2,
          repeats: 1,
          horizon: 8,
          termination: "fixed-horizon",
          scene_pin: 0,
          policy_options: { url: fake.url },
          attack_params: {},
          calibration: {},
        },
        out: dir,
        resume: false,
        concurrency: 1,
        policyOptions: { url: fake.url, extra: { ...FAST, replan: 1 } },
        commandLine: ["test"],
        finish: { html: false },
      });
      expect(result.report?.arms.none?.errors).toBe(2);
      const errors = readJournal(join(dir, "journal.jsonl")).episodes.map((e) => e.record.error);
      expect(errors.every((e) => e?.code === "policy/protocol")).toBe(true);
      expect(errors[0]?.message).toMatch(/no request asked for/);
    } finally {
      await fake.close();
    }
  });

  it("vla-eval: a second action for one observation is a protocol error on the next request", async () => {
    const fake = await fakeServer(
      () => {},
      (ws, d) => {
        const env = decodeEnvelope(new Uint8Array(d));
        if (env.type === "hello")
          ws.send(encodeEnvelope({ ...env, payload: { protocol_version: 1 } }));
        if (env.type !== "observation") return;
        const action = encodeEnvelope({
          type: "action",
          payload: { actions: float32Array(new Float32Array(7), [7]) },
          seq: env.seq,
          timestamp: 0,
        });
        ws.send(action);
        ws.send(action);
      },
    );
    try {
      const inst = await vlaEvalPolicy.load({ url: fake.url, extra: { ...FAST, replan: 1 } });
      await inst.reset(EPISODE);
      expect((await inst.act(OBS)).length).toBe(7);
      await new Promise((r) => setTimeout(r, 50));
      await expect(inst.act(OBS)).rejects.toMatchObject({
        code: "policy/protocol",
        message: expect.stringMatching(/no request asked for/),
      });
      await inst.close();
    } finally {
      await fake.close();
    }
  });

  it.each([
    ["openpi", openpiPolicy],
    ["vla-eval", vlaEvalPolicy],
  ])(
    "%s: a flood of 150 x 8 MB unasked frames ends the connection, the heap stays small",
    async (protocol, policy) => {
      // Each flood frame is a well-formed action, so only its being unasked can refuse it.
      const pad = new Uint8Array(8 * 1024 * 1024);
      const frame =
        protocol === "openpi"
          ? encodeOpenpi({ actions: float32Array(new Float32Array(7), [1, 7]), pad } as never)
          : encodeEnvelope({
              type: "action",
              payload: { actions: float32Array(new Float32Array(7), [7]), pad } as never,
              seq: 0,
              timestamp: 0,
            });
      let sent = 0;
      let finish = () => {};
      const flooded = new Promise<void>((r) => {
        finish = r;
      });
      const flood = (ws: WebSocket) => {
        ws.on("close", () => finish());
        const push = () => {
          while (sent < 150 && ws.readyState === ws.OPEN && ws.bufferedAmount < 32 * 1024 * 1024) {
            ws.send(frame);
            sent += 1;
          }
          if (ws.readyState !== ws.OPEN) return;
          if (sent < 150) setTimeout(push, 5);
          else ws.send(new Uint8Array(0), () => finish());
        };
        push();
      };
      const fake = await fakeServer(
        (ws) => {
          if (protocol === "openpi") {
            ws.send(Uint8Array.of(0x80));
            flood(ws);
          }
        },
        (ws, d) => {
          if (protocol !== "vla-eval") return;
          const env = decodeEnvelope(new Uint8Array(d));
          if (env.type === "hello") {
            ws.send(encodeEnvelope({ ...env, payload: { protocol_version: 1 } }));
            flood(ws);
          }
        },
      );
      try {
        const used = () => process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
        const before = used();
        const inst = await policy.load({ url: fake.url, extra: FAST });
        await inst.reset(EPISODE);
        await flooded;
        const after = used();
        await expect(inst.act(OBS)).rejects.toMatchObject({ code: "policy/protocol" });
        // 150 x 8 MB is 1.2 GB; the client holds at most MAX_QUEUED frames, then drops them all.
        expect(after - before).toBeLessThan(200 * 1024 * 1024);
        expect(sent).toBeLessThan(150);
        await inst.close();
      } finally {
        await fake.close();
      }
    },
  );
});
