#!/usr/bin/env node
/**
 * Memory of the request servers under a flood (not part of `npm run bench`: it sends 1.4 GB).
 * For each server (serve-policy openpi, vla-eval and OpenVLA, and the bridge), started in its
 * own process with the default 64 MiB frame limit (so the default 192 MiB intake budget) and a
 * 5 s frame deadline: 24 peers each send a whole 60 MB frame (or body) at once, then 10 peers each
 * send 30 MB of a 60 MB frame and stall. The server's RSS is sampled every 20 ms; a good request
 * is sent every 250 ms throughout (connect timeout 5 s, no retry) and must be answered; why any
 * was not is listed under `lost`.
 *
 *   npm run build && node bench/intake-rss.mjs [openpi,vla-eval,openvla,bridge]
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = (p) => join(root, "dist", p);
const which = (process.argv[2] ?? "openpi,vla-eval,openvla,bridge").split(",");
const MB = 1e6;
const FRAME = 60 * MB;
const DEADLINE_MS = 5000;

const { openpiPolicy } = await import(dist("policies/served/openpi.js"));
const { openvlaPolicy } = await import(dist("policies/served/openvla.js"));
const { vlaEvalPolicy } = await import(dist("policies/served/vla-eval.js"));
const { encodeEnvelope, decodeEnvelope } = await import(dist("policies/served/codec/vla-eval.js"));
const { WebSocket } = await import("ws");

const rssOf = (pid) => {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
};

/** The server in a child process; resolves with its pid and port. */
function startServer(kind) {
  const script =
    kind === "bridge"
      ? `const { startBridge } = await import(${JSON.stringify(dist("bridge/server.js"))});
         const { loadProfile } = await import(${JSON.stringify(dist("bridge/profile.js"))});
         const { mkdtempSync } = await import("node:fs");
         const { tmpdir } = await import("node:os");
         const { join } = await import("node:path");
         const b = await startBridge({ policy: "stub", policyOptions: {}, arms: ["none"],
           profile: loadProfile("libero"), host: "127.0.0.1", port: 0,
           out: join(mkdtempSync(join(tmpdir(), "provael-intake-")), "run"),
           maxFrameBytes: 64 * 1024 * 1024, frameDeadlineMs: ${DEADLINE_MS} });
         console.log(JSON.stringify({ port: b.port, url: b.armUrls.none }));`
      : `const { startPolicyServer } = await import(${JSON.stringify(dist("policies/served/server/index.js"))});
         const { stubPolicy } = await import(${JSON.stringify(dist("policies/stub.js"))});
         const s = await startPolicyServer({ policy: stubPolicy, protocol: ${JSON.stringify(kind)},
           host: "127.0.0.1", port: 0, frameDeadlineMs: ${DEADLINE_MS} });
         console.log(JSON.stringify({ port: s.port, url: s.url }));`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve) => {
    child.stdout.once("data", (d) => resolve({ child, ...JSON.parse(d.toString()) }));
  });
}

const IMAGE = { width: 32, height: 32, channels: 3, data: new Uint8Array(32 * 32 * 3) };
const OBS = {
  images: { agentview: IMAGE },
  state: new Float32Array(8),
  instruction: "move to the cup",
};
const FAST = { retries: 0, backoffMs: 10, connectTimeoutMs: 5000, timeoutMs: 10_000 };

async function goodRequest(kind, url) {
  if (kind === "bridge") {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    await new Promise((r, j) => {
      ws.once("open", r);
      ws.once("error", j);
    });
    const reply = new Promise((r) => ws.once("message", (d) => r(decodeEnvelope(d))));
    ws.send(
      encodeEnvelope({
        type: "hello",
        payload: { harness_version: "b", protocol_version: 1 },
        seq: 1,
        timestamp: 0,
      }),
    );
    const env = await Promise.race([
      reply,
      new Promise((_, j) => setTimeout(() => j(new Error("no hello")), 10_000)),
    ]);
    ws.close();
    return env.type === "hello";
  }
  const policy = { openpi: openpiPolicy, openvla: openvlaPolicy, "vla-eval": vlaEvalPolicy }[kind];
  const inst = await policy.load({ url, extra: FAST });
  try {
    await inst.reset({ task: "fetch_cup", seed: 0, policySeed: 1 });
    return (await inst.act(OBS)).length === 7;
  } finally {
    await inst.close();
  }
}

const payload = Buffer.alloc(FRAME, 0x61);

/** A raw peer sending `sent` bytes of a `total`-byte frame (websocket) or body (HTTP). */
function peer(kind, port, total, sent) {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const closed = new Promise((r) => socket.once("close", r));
    socket.on("error", () => {});
    // Read what the server answers (and its end of the connection).
    socket.on("data", () => {});
    const path = kind === "bridge" ? "/arms/none" : "/";
    const body = () => {
      const n = Math.min(sent, FRAME);
      socket.write(payload.subarray(0, n), () => resolve({ socket, closed }));
    };
    socket.once("connect", () => {
      if (kind === "openvla") {
        socket.write(
          `POST /act HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: ${total}\r\n\r\n`,
        );
        body();
        return;
      }
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
      socket.once("data", () => {
        const h = Buffer.alloc(14);
        h[0] = 0x82;
        h[1] = 0x80 | 127;
        h.writeBigUInt64BE(BigInt(total), 2);
        socket.write(h);
        body();
      });
    });
    closed.then(() => resolve({ socket, closed }));
  });
}

async function measure(kind) {
  const { child, port, url } = await startServer(kind);
  await new Promise((r) => setTimeout(r, 500));
  const start = rssOf(child.pid);
  let peak = start;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssOf(child.pid));
  }, 20);
  let answered = 0;
  let tried = 0;
  /** Why each good request that was not answered failed (an honest count names the cause). */
  const lost = [];
  let goodRunning = true;
  const good = (async () => {
    while (goodRunning) {
      tried += 1;
      try {
        if (await goodRequest(kind, url)) answered += 1;
        else lost.push("wrong reply");
      } catch (e) {
        lost.push(e instanceof Error ? e.message.slice(0, 200) : String(e));
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  const phase = async (n, total, sent, waitMs) => {
    peak = rssOf(child.pid);
    const peers = await Promise.all(Array.from({ length: n }, () => peer(kind, port, total, sent)));
    const t0 = performance.now();
    await Promise.race([
      Promise.all(peers.map((p) => p.closed)),
      new Promise((r) => setTimeout(r, waitMs)),
    ]);
    const stillOpen = peers.filter((p) => !p.socket.destroyed).length;
    for (const p of peers) p.socket.destroy();
    await new Promise((r) => setTimeout(r, 300));
    return { peak, stillOpen, seconds: Number(((performance.now() - t0) / 1000).toFixed(1)) };
  };
  const flood = await phase(24, FRAME, FRAME, 3000);
  const stalled = await phase(10, FRAME, 30 * MB, DEADLINE_MS + 5000);
  goodRunning = false;
  await good;
  clearInterval(sampler);
  const after = rssOf(child.pid);
  child.kill();
  const mb = (b) => Math.round(b / 1e6);
  return {
    server: kind,
    rss_start_mb: mb(start),
    flood_24x60MB_peak_mb: mb(flood.peak),
    stalled_10x30of60MB_peak_mb: mb(stalled.peak),
    stalled_open_after_deadline: stalled.stillOpen,
    stalled_all_closed_after_s: stalled.stillOpen === 0 ? stalled.seconds : null,
    rss_end_mb: mb(after),
    good_requests: `${answered}/${tried} answered`,
    ...(lost.length > 0 ? { lost } : {}),
  };
}

for (const kind of which) console.log(JSON.stringify(await measure(kind)));
