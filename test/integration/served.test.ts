/**
 * Served policies end to end in one process: `provael serve-policy`'s server objects in front of
 * the stub policy, our clients through the real runner, and servers that fail in every way a
 * remote one can (killed mid-run, garbage, silence, oversized frames).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { resolveAttacks } from "../../src/attacks/index.js";
import { ProvaelError } from "../../src/core/errors.js";
import type { Observation } from "../../src/core/types.js";
import { encodeMsgpack } from "../../src/policies/served/codec/msgpack.js";
import { float32Array } from "../../src/policies/served/codec/ndarray.js";
import { decodeOpenpi, encodeOpenpi } from "../../src/policies/served/codec/openpi.js";
import { isWireMap } from "../../src/policies/served/codec/tree.js";
import { decodeEnvelope, encodeEnvelope } from "../../src/policies/served/codec/vla-eval.js";
import {
  decodeObservation,
  encodeObservation,
  LAYOUTS,
  resolveLayout,
} from "../../src/policies/served/layouts.js";
import { openpiPolicy } from "../../src/policies/served/openpi.js";
import {
  type RunningServer,
  type ServeProtocol,
  startPolicyServer,
} from "../../src/policies/served/server/index.js";
import { OPENPI_ERROR_REASON } from "../../src/policies/served/server/openpi-server.js";
import { stubPolicy } from "../../src/policies/stub.js";
import { readJournal } from "../../src/rundir/journal.js";
import type { PlanSpec } from "../../src/runner/plan.js";
import { runAttack } from "../../src/runner/run.js";
import { tempDir } from "../support/tmp.js";

const FAST = { retries: 1, backoffMs: 10, connectTimeoutMs: 2000, timeoutMs: 5000 };

const plan = (policy: string, url?: string, over: Partial<PlanSpec> = {}): PlanSpec => ({
  policy,
  suite: "stub",
  tasks: ["fetch_cup", "wipe_plate", "grab_sponge"],
  arms: resolveAttacks(["none", "control", "instruction"]),
  seed: 0,
  seeds: 2,
  repeats: 1,
  horizon: 8,
  termination: "fixed-horizon",
  scene_pin: 0,
  policy_options: url ? { url } : {},
  attack_params: {},
  calibration: {},
  ...over,
});

async function run(
  p: PlanSpec,
  out: string,
  extra: Record<string, unknown> = FAST,
  more: Partial<Parameters<typeof runAttack>[0]> = {},
) {
  const url = p.policy_options.url as string | undefined;
  return runAttack({
    plan: p,
    out,
    resume: false,
    concurrency: 4,
    policyOptions: { ...(url ? { url } : {}), extra },
    commandLine: ["test"],
    finish: { html: false },
    ...more,
  });
}

/**
 * report.json with run.policy blanked and run.served_model dropped: the only fields a served run
 * may change (the model its server reported is checked on its own).
 */
const comparable = (dir: string) => {
  const r = JSON.parse(readFileSync(join(dir, "report.json"), "utf8"));
  r.run.policy = "-";
  delete r.run.served_model;
  return r;
};

const servers: RunningServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function serve(protocol: ServeProtocol, port = 0): Promise<RunningServer> {
  const s = await startPolicyServer({ policy: stubPolicy, protocol, host: "127.0.0.1", port });
  servers.push(s);
  return s;
}

const inProcess = new Map<string, ReturnType<typeof comparable>>();
/** The in-process stub's report for the same plan (played once per plan). */
async function inProcessReport(over: Partial<PlanSpec>) {
  const key = JSON.stringify(over);
  if (!inProcess.has(key)) {
    const dir = tempDir();
    await run(plan("stub", undefined, over), dir, {});
    inProcess.set(key, comparable(dir));
  }
  return inProcess.get(key);
}

describe("served stub policy = in-process stub policy", () => {
  // OpenVLA's JSON bodies cost the most per step: it plays a smaller plan.
  it.each<[string, ServeProtocol, Partial<PlanSpec>]>([
    ["openpi", "openpi", {}],
    ["openvla", "openvla", { tasks: ["grab_sponge"] }],
    ["vla-eval", "vla-eval", {}],
  ])("over %s: the same report but run.policy", async (policy, protocol, over) => {
    const server = await serve(protocol);
    const dir = tempDir();
    const result = await run(plan(policy, server.url, over), dir);
    expect(result.report?.arms.none?.errors).toBe(0);
    const served = JSON.parse(readFileSync(join(dir, "report.json"), "utf8")).run.served_model;
    expect(served?.protocol).toBe(protocol);
    expect(comparable(dir)).toEqual(await inProcessReport(over));
  });
});

describe("layouts", () => {
  const image = (w: number, h: number, seed: number) => ({
    width: w,
    height: h,
    channels: 3,
    data: Uint8Array.from({ length: w * h * 3 }, (_, i) => (i * 31 + seed) % 256),
  });
  const obs: Observation = {
    images: { agentview: image(128, 128, 1), wrist: image(128, 128, 2) },
    state: Float32Array.of(0.1, 0.2, 0.3, 1.5, -0.5, 0.25, 0.04, -0.04),
    instruction: "put the bowl on the plate",
  };

  it("LIBERO: 224x224 rotated images and float64 state, undone exactly on the server side", () => {
    const layout = LAYOUTS.libero!;
    const wire = decodeOpenpi(encodeOpenpi(encodeObservation(layout, obs)));
    if (!isWireMap(wire)) throw new Error("not a map");
    const img = wire["observation/image"] as { dtype: string; shape: number[] };
    expect([img.dtype, img.shape]).toEqual(["|u1", [224, 224, 3]]);
    expect((wire["observation/state"] as { dtype: string }).dtype).toBe("<f8");
    expect(wire.prompt).toBe("put the bowl on the plate");
    const back = decodeObservation(layout, wire, { imageSize: [128, 128], cameras: null });
    expect(back.obs.images.agentview).toEqual(obs.images.agentview);
    expect(back.obs.images.wrist).toEqual(obs.images.wrist);
    expect(back.obs.state).toEqual(obs.state);
    expect(back.obs.instruction).toBe(obs.instruction);
  });

  it("ALOHA: CHW images under `images` and the state padded to 14", () => {
    const wire = encodeObservation(LAYOUTS.aloha!, obs);
    const images = wire.images as Record<string, { shape: number[] }>;
    expect(images.cam_high?.shape).toEqual([3, 224, 224]);
    expect((wire.state as { shape: number[] }).shape).toEqual([14]);
  });

  it("reads a YAML mapping file and rejects a bad one with the field named", () => {
    const dir = tempDir();
    const good = join(dir, "map.yaml");
    const bad = join(dir, "bad.yaml");
    writeFileSync(
      good,
      [
        "extends: libero",
        "images:",
        "  - { key: [cams, front], camera: agentview, size: 96, format: CHW }",
        "constants: { robot: tabletop }",
        "actions: { dim: 8, select: [0, 1, 2, 3, 4, 5, 7] }",
        "replan: 3",
      ].join("\n"),
    );
    writeFileSync(bad, "images:\n  - { key: x, camera: 3 }\n");
    const layout = resolveLayout(good);
    expect(layout.replan).toBe(3);
    const wire = encodeObservation(layout, obs);
    expect((wire.cams as Record<string, { shape: number[] }>).front?.shape).toEqual([3, 96, 96]);
    expect(wire.robot).toBe("tabletop");
    expect(() => resolveLayout(bad)).toThrow(/images\.0\.camera/);
    expect(() => resolveLayout("nope")).toThrow(/unknown layout 'nope'/);
  });
});

describe("openpi server conformance", () => {
  it("sends the metadata frame first, answers /healthz, and reports errors as text + 1011", async () => {
    const server = await serve("openpi");
    const health = await fetch(`http://127.0.0.1:${server.port}/healthz`);
    expect([health.status, await health.text()]).toEqual([200, "OK\n"]);

    const { WebSocket } = await import("ws");
    const ws = new WebSocket(server.url);
    const frames: Array<{ binary: boolean; data: Buffer }> = [];
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    ws.on("message", (data: Buffer, binary: boolean) => frames.push({ binary, data }));
    await new Promise((r) => ws.once("open", r));
    await new Promise((r) => setTimeout(r, 50));
    expect(frames[0]?.binary).toBe(true);
    expect(isWireMap(decodeOpenpi(frames[0]!.data))).toBe(true);
    // A str-keyed "array" where the state belongs: upstream fails the same way.
    ws.send(
      encodeMsgpack({
        "observation/state": {
          __ndarray__: true,
          data: new Uint8Array(4),
          dtype: "<f4",
          shape: [1],
        },
        prompt: "x",
      }),
    );
    const close = await closed;
    expect(frames[1]?.binary).toBe(false);
    expect(frames[1]?.data.toString()).toMatch(/msgpack bin keys/);
    expect(close).toEqual({ code: 1011, reason: OPENPI_ERROR_REASON });
  });

  it("the client surfaces the server's error text and reconnects for the next request", async () => {
    const server = await serve("openpi");
    const inst = await openpiPolicy.load({ url: server.url, extra: { ...FAST, layout: "droid" } });
    try {
      await inst.reset({ task: "fetch_cup", seed: 0, policySeed: 1 });
      const obs = { images: {}, state: new Float32Array(7), instruction: "move to the cup" };
      // The server speaks LIBERO: DROID's keys make it fail, and the client says why.
      await expect(inst.act(obs)).rejects.toThrow(/policy server failed.*observation\/state/s);
      await expect(inst.act(obs)).rejects.toThrow(/policy server failed/);
    } finally {
      await inst.close();
    }
  });
});

describe("openvla and vla-eval server conformance", () => {
  it("openvla: 'error' with HTTP 200 on a bad body, 422 on non-JSON", async () => {
    const server = await serve("openvla");
    const bad = await fetch(`${server.url}/act`, { method: "POST", body: '{"instruction": 3}' });
    expect([bad.status, await bad.text()]).toEqual([200, '"error"']);
    const garbage = await fetch(`${server.url}/act`, { method: "POST", body: "{" });
    expect(garbage.status).toBe(422);
  });

  it("vla-eval: hello with specs, seq echoed, error frames keep the connection, /health", async () => {
    const server = await serve("vla-eval");
    const health = await fetch(`http://127.0.0.1:${server.port}/health`);
    expect(health.status).toBe(200);
    const { WebSocket } = await import("ws");
    const ws = new WebSocket(server.url);
    const replies: ReturnType<typeof decodeEnvelope>[] = [];
    const waiters: Array<() => void> = [];
    ws.on("message", (d: Buffer) => {
      replies.push(decodeEnvelope(new Uint8Array(d)));
      waiters.shift()?.();
    });
    const next = () => new Promise<void>((r) => waiters.push(r));
    await new Promise((r) => ws.once("open", r));
    const send = (type: "hello" | "observation" | "episode_start", payload: object, seq: number) =>
      ws.send(encodeEnvelope({ type, payload: payload as never, seq, timestamp: 1 }));
    let got = next();
    send("hello", { harness_version: "t", protocol_version: 1 }, 1);
    await got;
    expect(replies[0]).toMatchObject({ type: "hello", seq: 1, payload: { protocol_version: 1 } });
    expect(replies[0]?.payload.action_spec).toBeDefined();
    // It asks the benchmark for the state its layout reads (a stock LIBERO config sends none).
    expect(replies[0]?.payload.observation_params).toEqual({ send_state: true });
    got = next();
    send("observation", { task_description: "move to the cup" }, 2); // no states: fails
    await got;
    expect(replies[1]).toMatchObject({ type: "error", seq: 2 });
    expect(String(replies[1]?.payload.error)).toMatch(/^observation_failed: /);
    got = next();
    send(
      "observation",
      { task_description: "move to the cup", states: float32Array(new Float32Array(7), [7]) },
      3,
    );
    await got;
    expect(replies[2]).toMatchObject({ type: "action", seq: 3 });
    ws.close();
  });
});

/** A raw openpi peer: metadata (or not), then whatever `reply` answers. */
async function fakeOpenpi(opts: {
  metadata?: Uint8Array | null;
  reply?: (req: Buffer) => Uint8Array | string | null;
  onHeaders?: (h: Record<string, unknown>) => void;
}): Promise<{ url: string; close: () => Promise<void> }> {
  const http = createServer();
  const wss = new WebSocketServer({ server: http });
  wss.on("connection", (ws, req) => {
    opts.onHeaders?.(req.headers);
    if (opts.metadata !== null) ws.send(opts.metadata ?? Uint8Array.of(0x80));
    ws.on("message", (d: Buffer) => {
      const r = opts.reply?.(d);
      if (r !== null && r !== undefined) ws.send(r);
    });
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

describe("faults", () => {
  it("a server killed mid-run: in-flight episodes error, the journal keeps the rest, --resume completes the same report", async () => {
    const first = await serve("openpi");
    const port = first.port;
    const whole = tempDir();
    const small = { tasks: ["fetch_cup", "wipe_plate"] };
    await run(plan("openpi", first.url, small), whole);

    const dir = tempDir();
    let killed = false;
    const aborted = run(plan("openpi", first.url, small), dir, FAST, {
      maxErrors: 2,
      onProgress: (done) => {
        if (done >= 12 && !killed) {
          killed = true;
          void first.close();
        }
      },
    });
    await expect(aborted).rejects.toMatchObject({ code: "run/too-many-errors" });
    const journal = readJournal(join(dir, "journal.jsonl"));
    const finished = journal.episodes.filter((e) => e.record.error === null);
    const errored = journal.episodes.filter((e) => e.record.error !== null);
    expect(finished.length).toBeGreaterThanOrEqual(12);
    expect(errored.length).toBeGreaterThan(0);
    expect(errored[0]?.record.error?.code).toMatch(/^policy\//);

    servers.splice(servers.indexOf(first), 1);
    await serve("openpi", port);
    const resumed = await run(plan("openpi", first.url, small), dir, FAST, { resume: true });
    expect(resumed.report).not.toBeNull();
    expect(readFileSync(join(dir, "report.json"), "utf8")).toBe(
      readFileSync(join(whole, "report.json"), "utf8"),
    );
  });

  it("a server that answers garbage: episodes error with policy/protocol, the run goes on", async () => {
    const fake = await fakeOpenpi({ reply: () => Uint8Array.of(0xc1, 0x00) });
    try {
      const dir = tempDir();
      const result = await run(plan("openpi", fake.url, { seeds: 1 }), dir);
      expect(result.report?.arms.none?.errors).toBe(3);
      const e = readJournal(join(dir, "journal.jsonl")).episodes[0]?.record.error;
      expect(e?.code).toBe("policy/protocol");
      expect(e?.message).toMatch(/malformed msgpack/);
    } finally {
      await fake.close();
    }
  });

  it("a reply with the wrong action shape or dtype is refused", async () => {
    const fake = await fakeOpenpi({
      reply: () => encodeOpenpi({ actions: float32Array(new Float32Array(6), [1, 6]) }),
    });
    try {
      const inst = await openpiPolicy.load({ url: fake.url, extra: FAST });
      inst.reset({ task: "t", seed: 0, policySeed: 0 });
      await expect(
        inst.act({ images: {}, state: new Float32Array(8), instruction: "x" }),
      ).rejects.toThrow(/must have shape \(H, 7\).*got \(1, 6\)/);
      await inst.close();
    } finally {
      await fake.close();
    }
  });

  it("a server that never answers: policy/timeout after the retries", async () => {
    // Counted, not timed: the request is sent once and retried once, then given up.
    let asked = 0;
    const fake = await fakeOpenpi({
      reply: () => {
        asked += 1;
        return null;
      },
    });
    try {
      const inst = await openpiPolicy.load({
        url: fake.url,
        extra: { ...FAST, timeoutMs: 150, retries: 1 },
      });
      inst.reset({ task: "t", seed: 0, policySeed: 0 });
      await expect(
        inst.act({ images: {}, state: new Float32Array(8), instruction: "x" }),
      ).rejects.toMatchObject({ code: "policy/timeout" });
      expect(asked).toBe(2);
      await inst.close();
    } finally {
      await fake.close();
    }
  });

  it("a server that sends no metadata frame fails the load, not the run's episodes", async () => {
    const fake = await fakeOpenpi({ metadata: null });
    try {
      await expect(
        openpiPolicy.load({ url: fake.url, extra: { ...FAST, connectTimeoutMs: 150, retries: 0 } }),
      ).rejects.toMatchObject({ code: "policy/load" });
    } finally {
      await fake.close();
    }
  });

  it("a frame over the cap is refused with a clear error", async () => {
    const fake = await fakeOpenpi({ reply: () => new Uint8Array(5000) });
    try {
      const inst = await openpiPolicy.load({
        url: fake.url,
        extra: { ...FAST, maxFrameBytes: 4096 },
      });
      inst.reset({ task: "t", seed: 0, policySeed: 0 });
      await expect(
        inst.act({ images: {}, state: new Float32Array(8), instruction: "x" }),
      ).rejects.toThrow(/larger than 4096 bytes/);
      await inst.close();
    } finally {
      await fake.close();
    }
  });

  it("sends Authorization: Api-Key and refuses a non-ws URL", async () => {
    let auth: unknown;
    const fake = await fakeOpenpi({ onHeaders: (h) => (auth = h.authorization) });
    try {
      const inst = await openpiPolicy.load({ url: fake.url, extra: { ...FAST, apiKey: "k3y" } });
      await inst.close();
      expect(auth).toBe("Api-Key k3y");
      await expect(openpiPolicy.load({ url: "http://127.0.0.1:1" })).rejects.toBeInstanceOf(
        ProvaelError,
      );
    } finally {
      await fake.close();
    }
  });
});
