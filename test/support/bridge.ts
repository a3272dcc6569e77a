/**
 * Helpers for tests of `provael bridge`: a hand-driven benchmark connection speaking vla-eval as
 * LIBERO does, a bridge started in process on a temporary directory, and the journal's records.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { expect } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { loadProfile } from "../../src/bridge/profile.js";
import { type BridgeOptions, type RunningBridge, startBridge } from "../../src/bridge/server.js";
import type { EpisodeRecord } from "../../src/core/episode.js";
import { float32Array, float64Array, uint8Array } from "../../src/policies/served/codec/ndarray.js";
import { type WireMap, wireMap } from "../../src/policies/served/codec/tree.js";
import {
  decodeEnvelope,
  type Envelope,
  encodeEnvelope,
  type VlaEvalType,
} from "../../src/policies/served/codec/vla-eval.js";
import { tempDir } from "./tmp.js";

export const LIBERO = "vla_eval.benchmarks.libero.benchmark:LIBEROBenchmark";
export const profile = loadProfile("libero");

/** A hand-driven benchmark connection. */
export class Peer {
  seq = 0;
  private readonly inbox: Envelope[] = [];
  private wake: (() => void) | null = null;
  closed = false;

  private constructor(readonly ws: WebSocket) {
    ws.on("message", (d: Buffer) => {
      this.inbox.push(decodeEnvelope(new Uint8Array(d.buffer, d.byteOffset, d.byteLength)));
      this.wake?.();
    });
    ws.on("close", () => {
      this.closed = true;
      this.wake?.();
    });
  }

  static open(url: string): Promise<Peer> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { perMessageDeflate: false });
      ws.once("open", () => resolve(new Peer(ws)));
      ws.once("error", reject);
    });
  }

  send(type: VlaEvalType, payload: WireMap): number {
    this.seq += 1;
    this.ws.send(encodeEnvelope({ type, payload, seq: this.seq, timestamp: 0 }));
    return this.seq;
  }

  async next(timeoutMs = 10_000): Promise<Envelope> {
    const deadline = Date.now() + timeoutMs;
    while (this.inbox.length === 0) {
      if (this.closed) throw new Error("closed");
      if (Date.now() > deadline) throw new Error("no reply (the bridge hangs)");
      await new Promise<void>((r) => {
        this.wake = r;
        setTimeout(r, 50);
      });
    }
    return this.inbox.shift() as Envelope;
  }

  async hello(): Promise<Envelope> {
    const p = wireMap();
    p.harness_version = "test";
    p.protocol_version = 1;
    p.benchmark = LIBERO;
    this.send("hello", p);
    return this.next();
  }

  start(name: string, idx: number): void {
    const task = wireMap();
    task.name = name;
    task.suite = "libero_spatial";
    task.episode_idx = idx;
    const p = wireMap();
    p.task = task;
    this.send("episode_start", p);
  }

  /** One observation with the end effector at x (LIBERO's 8-D states); resolves with the reply. */
  async observe(x: number, pixel = 7): Promise<Envelope> {
    const p = wireMap();
    const images = wireMap();
    images.agentview = uint8Array(new Uint8Array(8 * 8 * 3).fill(pixel), [8, 8, 3]);
    p.images = images;
    p.task_description = "pick up the black bowl and place it on the plate";
    p.states = float64Array([x, 0, 1, 0, 0, 0, 0.02, -0.02], [8]);
    this.send("observation", p);
    return this.next();
  }

  end(success: boolean): void {
    const p = wireMap();
    const m = wireMap();
    m.success = success;
    p.metrics = m;
    p.steps = 2;
    p.elapsed_sec = 0;
    this.send("episode_end", p);
  }

  close(): void {
    this.ws.close();
  }

  kill(): void {
    this.ws.terminate();
  }
}

/** What a test started (bridges, upstreams): closed, newest first, by `closeOpen` in afterEach. */
/**
 * One benchmark episode on task "bowl" at `seed`: HELLO, EPISODE_START, `steps` observations each
 * answered by an action, EPISODE_END with `success`.
 */
export async function playEpisode(
  url: string,
  {
    seed = 0,
    steps = 2,
    success = false,
  }: { seed?: number; steps?: number; success?: boolean } = {},
): Promise<void> {
  const p = await Peer.open(url);
  await p.hello();
  p.start("bowl", seed);
  for (let s = 0; s < steps; s++) expect((await p.observe(0.1)).type).toBe("action");
  p.end(success);
  p.close();
}

export const open: { close(): Promise<unknown> }[] = [];

export async function closeOpen(): Promise<void> {
  for (const o of open.splice(0).reverse()) await o.close().catch(() => {});
}

/** A bridge in process on the LIBERO profile (`more` overrides any option, `out` included). */
export async function bridge(
  policy: string,
  arms: string[],
  extra: Record<string, unknown> = {},
  url?: string,
  more: Partial<BridgeOptions> = {},
) {
  const out = more.out ?? join(tempDir(), "run");
  const b = await startBridge({
    policy,
    policyOptions: { ...(url ? { url } : {}), extra: { retries: 0, timeoutMs: 3000, ...extra } },
    arms,
    profile,
    host: "127.0.0.1",
    port: 0,
    ...more,
    out,
  });
  open.push(b);
  return { b, out };
}

export const records = (out: string): EpisodeRecord[] =>
  readFileSync(join(out, "journal.jsonl"), "utf8")
    .trim()
    .split("\n")
    .slice(1)
    .map((l) => (JSON.parse(l) as { record: EpisodeRecord }).record);

export const arm = (b: RunningBridge, a: string) => b.armUrls[a] as string;

/** Waits until the bridge has journalled `n` episodes (frames sent are not yet received). */
export async function journalled(b: RunningBridge, n: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (b.finished() < n) {
    if (Date.now() > deadline) throw new Error(`only ${b.finished()} of ${n} episodes journalled`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A vla-eval model server that records what reached it: HELLO answered (with `hello` merged in),
 * each EPISODE_START's and OBSERVATION's payload kept as decoded with images left encoded (so the
 * test sees the bytes that travelled), observations answered with `chunk` zero actions (a chunked
 * upstream when `chunk` > 1); `GET /health` and `GET /config` answered as vla-eval's serve.py
 * does (the config echoes its query).
 */
export async function recordingUpstream(chunk = 1, hello: Record<string, unknown> = {}) {
  const http = createServer((req, res) => {
    const [path, query] = (req.url ?? "").split(/(?=\?)/, 2);
    const body =
      path === "/health"
        ? '{"status": "ok"}'
        : path === "/config"
          ? JSON.stringify({ max_batch_size: 8, max_wait_time: 0.5, query: query ?? "" })
          : null;
    res.writeHead(body === null ? 404 : 200, { "content-type": "application/json" });
    res.end(body ?? "");
  });
  const wss = new WebSocketServer({ server: http });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", () => r()));
  const observations: WireMap[] = [];
  const starts: WireMap[] = [];
  wss.on("connection", (ws) => {
    ws.on("message", (d: Buffer) => {
      const env = decodeEnvelope(new Uint8Array(d.buffer, d.byteOffset, d.byteLength), undefined, {
        deferImages: true,
      });
      const reply = (type: VlaEvalType, payload: WireMap) =>
        ws.send(encodeEnvelope({ type, payload, seq: env.seq, timestamp: 0 }));
      if (env.type === "hello") {
        const p = wireMap();
        p.protocol_version = 1;
        p.model_server = "recording";
        Object.assign(p, hello);
        reply("hello", p);
      } else if (env.type === "episode_start") {
        starts.push(env.payload);
      } else if (env.type === "observation") {
        observations.push(env.payload);
        const p = wireMap();
        p.actions = float32Array(new Array(chunk * 7).fill(0), chunk > 1 ? [chunk, 7] : [7]);
        reply("action", p);
      }
    });
  });
  const port = (http.address() as { port: number }).port;
  const upstream = {
    url: `ws://127.0.0.1:${port}`,
    observations,
    starts,
    close: () =>
      new Promise<void>((r) => {
        for (const c of wss.clients) c.terminate();
        wss.close();
        http.close(() => r());
      }),
  };
  open.push(upstream);
  return upstream;
}
