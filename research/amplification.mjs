#!/usr/bin/env node
/**
 * Amplification frames against `provael serve-policy` (openpi, OpenVLA, vla-eval) and
 * `provael bridge`, each in its own process: frames small in bytes and huge in decoded objects
 * (issue 16). For each server: the refusal it answers, whether it then answers a good request,
 * and its peak RSS (VmHWM from /proc, sampled throughout). Needs a build (`npm run build`).
 *
 *   node research/amplification.mjs   # takes minutes and about 2 GB: four servers, 60 MB frames
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { encodeJsonNumpy } from "../dist/policies/served/codec/json-numpy.js";
import { float32Array } from "../dist/policies/served/codec/ndarray.js";
import { decodeOpenpi, encodeOpenpi } from "../dist/policies/served/codec/openpi.js";
import { decodeEnvelope, encodeEnvelope } from "../dist/policies/served/codec/vla-eval.js";
import { encodeObservation, LAYOUTS } from "../dist/policies/served/layouts.js";
import { defined } from "./checked.mjs";
import { parseScriptArgs } from "./script-args.mjs";

parseScriptArgs("amplification", "usage: node research/amplification.mjs   (no options)", {});

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const CLI = join(root, "dist", "cli", "main.js");
/** @param {string} name */
const layout = (name) => defined(LAYOUTS[name], `observation layout '${name}'`);

/**
 * msgpack array32 header then `n` copies of `element`.
 * @param {number} n
 * @param {number[]} element
 */
function array32(n, element) {
  const b = Buffer.alloc(5 + n * element.length);
  b[0] = 0xdd;
  b.writeUInt32BE(n, 1);
  if (element.length === 1) b.fill(element[0] ?? 0, 5);
  else for (let i = 5; i < b.length; i += element.length) b.set(element, i);
  return b;
}
/**
 * msgpack map32 header then `n` empty-map keys with nil values.
 * @param {number} n
 */
function map32(n) {
  const b = Buffer.alloc(5 + 2 * n);
  b[0] = 0xdf;
  b.writeUInt32BE(n, 1);
  for (let i = 6; i < b.length; i += 2) b[i] = 0x80;
  return b;
}
const FRAMES = {
  "20M empty maps (20 MB)": () => array32(20_000_000, [0x80]),
  "20M one-entry maps (60 MB)": () => array32(20_000_000, [0x81, 0xc0, 0xc0]),
  "30M-entry map (60 MB)": () => map32(30_000_000),
};
const JSON_BODY = () => `[${"{},".repeat(19_000_000)}{}]`;

/**
 * @param {number} w
 * @param {number} h
 */
const image = (w, h) => ({ width: w, height: h, channels: 3, data: new Uint8Array(w * h * 3) });
const OBS = {
  images: { agentview: image(128, 128), wrist: image(128, 128) },
  state: new Float32Array(8),
  instruction: "move to the cup",
};

/**
 * A process's resident and peak resident memory (MB), from /proc.
 * @param {number | undefined} pid
 */
function status(pid) {
  const s = readFileSync(`/proc/${pid}/status`, "utf8");
  /** @param {string} k */
  const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)?.[1] ?? 0);
  return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024 };
}

/**
 * Starts a CLI server and waits for the JSON line it prints once listening.
 * @param {string[]} args
 */
async function start(args) {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr.on("data", (d) => {
    err += d;
  });
  /** @type {string} */
  const line = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      if (out.includes("\n")) resolve(out.slice(0, out.indexOf("\n")));
    });
    child.on("exit", (c) => reject(new Error(`exited ${c}: ${err}`)));
  });
  let peak = 0;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, status(child.pid).rss);
    } catch {}
  }, 10);
  return {
    child,
    /** @type {ServerInfo} */
    info: JSON.parse(line),
    peak: () => Math.max(peak, status(child.pid).hwm),
    alive: () => child.exitCode === null && child.signalCode === null,
    stop: () => {
      clearInterval(timer);
      child.kill("SIGTERM");
    },
  };
}

/**
 * What a server prints once listening: its address, and a bridge's one address per arm.
 * @typedef {{ url: string, arms: Record<string, string> }} ServerInfo
 */
/** @typedef {{ binary: boolean, data: Buffer }} Frame */

/**
 * A client whose frames are read in order with `next`.
 * @param {string} url
 */
function ws(url) {
  const sock = new WebSocket(url, { maxPayload: 512 * 1024 * 1024 });
  /** @type {Frame[]} */
  const frames = [];
  /** @type {(() => void)[]} */
  const waiters = [];
  sock.on("message", (d, binary) => {
    // `ws` hands a Buffer unless the socket asked for another binaryType; fragments are joined.
    const data = Array.isArray(d) ? Buffer.concat(d) : Buffer.isBuffer(d) ? d : Buffer.from(d);
    frames.push({ binary, data });
    waiters.shift()?.();
  });
  /** @type {Promise<number>} */
  const closed = new Promise((r) => sock.on("close", (code) => r(code)));
  /** @returns {Promise<Frame>} */
  const next = () => {
    const f = frames.shift();
    return f
      ? Promise.resolve(f)
      : new Promise((r) => waiters.push(() => r(/** @type {Frame} */ (frames.shift()))));
  };
  return {
    sock,
    closed,
    open: new Promise((r, j) => {
      sock.once("open", r);
      sock.once("error", j);
    }),
    next,
  };
}

/** @param {number} seq */
const hello = (seq) =>
  encodeEnvelope({
    type: "hello",
    payload: { harness_version: "t", protocol_version: 1 },
    seq,
    timestamp: 0,
  });

/**
 * What a server refused of each frame, and how it answered a good request after.
 * @typedef {{ refused: Record<string, string>, good_request: string }} Outcome
 */
/** @type {(Outcome & { server: string, alive: boolean, rss_start_mb: number, rss_peak_mb: number, seconds: number })[]} */
const results = [];
/**
 * Starts a server, sends it the frames, and records its answers and memory.
 * @param {string} name
 * @param {string[]} args
 * @param {(info: ServerInfo) => Promise<Outcome>} attack
 */
async function measure(name, args, attack) {
  const server = await start(args);
  const base = server.peak();
  const t0 = performance.now();
  const rows = await attack(server.info);
  results.push({
    server: name,
    ...rows,
    alive: server.alive(),
    rss_start_mb: Math.round(base),
    rss_peak_mb: Math.round(server.peak()),
    seconds: Number(((performance.now() - t0) / 1000).toFixed(1)),
  });
  server.stop();
}

/** @param {string} protocol */
const serve = (protocol) => [
  "serve-policy",
  "--policy",
  "stub",
  "--protocol",
  protocol,
  "--port",
  "0",
  "--json",
];

await measure("serve-policy openpi", serve("openpi"), async ({ url }) => {
  /** @type {Record<string, string>} */
  const refused = {};
  for (const [what, make] of Object.entries(FRAMES)) {
    const c = ws(url);
    await c.open;
    await c.next(); // metadata
    c.sock.send(make());
    const f = await c.next();
    refused[what] =
      `${f.binary ? "binary" : "text"}: ${/maxElements|maxBuiltBytes/.exec(String(f.data))?.[0] ?? String(f.data).slice(0, 80)}; close ${await c.closed}`;
  }
  const c = ws(url);
  await c.open;
  await c.next();
  c.sock.send(encodeOpenpi(encodeObservation(layout("libero"), OBS)));
  const reply = decodeOpenpi((await c.next()).data);
  c.sock.close();
  const answered =
    reply !== null && typeof reply === "object" && "actions" in reply && Boolean(reply.actions);
  return { refused, good_request: answered ? "answered (actions)" : "NOT answered" };
});

await measure("serve-policy vla-eval", serve("vla-eval"), async ({ url }) => {
  /** @type {Record<string, string>} */
  const refused = {};
  const c = ws(url);
  await c.open;
  for (const [what, make] of Object.entries(FRAMES)) {
    c.sock.send(make());
    const e = decodeEnvelope((await c.next()).data);
    refused[what] = `${e.type}: ${/maxElements|maxBuiltBytes/.exec(String(e.payload.error))?.[0]}`;
  }
  c.sock.send(hello(1));
  const h = decodeEnvelope((await c.next()).data);
  c.sock.send(
    encodeEnvelope({
      type: "observation",
      payload: {
        task_description: "move to the cup",
        states: float32Array(new Float32Array(7), [7]),
      },
      seq: 2,
      timestamp: 0,
    }),
  );
  const a = decodeEnvelope((await c.next()).data);
  c.sock.close();
  return {
    refused,
    good_request: `same connection: ${h.type} seq ${h.seq}, ${a.type} seq ${a.seq}`,
  };
});

await measure("serve-policy openvla", serve("openvla"), async ({ url }) => {
  const res = await fetch(`${url}/act`, { method: "POST", body: JSON_BODY() });
  const text = await res.text();
  const good = await fetch(`${url}/act`, {
    method: "POST",
    body: encodeJsonNumpy(encodeObservation(layout("openvla"), OBS)),
  });
  return {
    refused: { "57 MB JSON array of {}": `HTTP ${res.status}: ${/maxElements/.exec(text)?.[0]}` },
    good_request: `HTTP ${good.status} ${(await good.text()).slice(0, 40)}…`,
  };
});

const out = mkdtempSync(join(tmpdir(), "provael-amp-"));
await measure(
  "bridge",
  [
    "bridge",
    "--policy",
    "stub",
    "--attacks",
    "none",
    "--profile",
    "tabletop",
    "--out",
    join(out, "run"),
    "--port",
    "0",
    "--json",
  ],
  async (info) => {
    const url = Object.values(info.arms)[0];
    if (!url) throw new Error("the bridge printed no arm address");
    /** @type {Record<string, string>} */
    const refused = {};
    const c = ws(url);
    await c.open;
    for (const [what, make] of Object.entries(FRAMES)) {
      c.sock.send(make());
      const e = decodeEnvelope((await c.next()).data);
      refused[what] =
        `${e.type}: ${/maxElements|maxBuiltBytes/.exec(String(e.payload.error))?.[0]}`;
    }
    c.sock.send(hello(1));
    const h = decodeEnvelope((await c.next()).data);
    c.sock.close();
    return { refused, good_request: `same connection: ${h.type} seq ${h.seq}` };
  },
);

for (const r of results) console.log(JSON.stringify(r));
const bad = results.filter((r) => !r.alive || r.rss_peak_mb >= 512);
process.exit(bad.length === 0 ? 0 : 1);
