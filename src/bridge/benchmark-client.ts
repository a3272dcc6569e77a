/**
 * The benchmark side of the vla-evaluation-harness protocol (PROTOCOLS.md §4.5), playing one of
 * our suites: what `vla-eval run` does with LIBERO, done by a Provael suite. HELLO with the
 * benchmark's name (the server's `observation_params` are honoured), per episode EPISODE_START
 * with the task dict (`episode_idx` picks the scene as the runner's pinning does), OBSERVATION
 * with PNG `__image__` maps, `task_description` and LIBERO's 8-D `states`, ACTION matched by seq,
 * and EPISODE_END with `metrics.success`. An ERROR reply fails the episode, which then ends without
 * EPISODE_END, as upstream's orchestrator does.
 *
 * Like `servers/vla_eval/provael_libero.py`, it also sends what the predicates need under one
 * extra key (contacts and object poses), and the state after the last action in the metrics, so
 * every step can be judged.
 *
 * @example
 *   const r = await playBenchmark({ suite: "tabletop", serverUrl: "ws://127.0.0.1:9000/arms/none",
 *     tasks: ["kitchen_red_block"], episodes: [0, 1], horizon: 40 });
 */
import { WebSocket } from "ws";
import { type Clock, systemClock } from "../core/clock.js";
import { ProvaelError } from "../core/errors.js";
import { TOOL_VERSION } from "../core/package-root.js";
import type { SimState, StepResult } from "../core/types.js";
import { float64Array, toFloat64, uint8Array } from "../policies/served/codec/ndarray.js";
import { asNdArray, isWireMap, type WireMap, wireMap } from "../policies/served/codec/tree.js";
import {
  decodeEnvelope,
  type Envelope,
  encodeEnvelope,
  type VlaEvalType,
} from "../policies/served/codec/vla-eval.js";
import { suites } from "../suites/index.js";

export interface BenchmarkOptions {
  suite: string;
  /** The model server, e.g. a bridge arm's `ws://HOST:PORT/arms/<arm>`. */
  serverUrl: string;
  tasks: string[];
  /** Episode indices to play for every task (`episode_idx`, the seed). */
  episodes: number[];
  /** Steps per episode; default each task's horizon. */
  horizon?: number;
  /** Scene offset: episode index i plays scene (pin + i) mod N, like the runner. */
  scenePin?: number;
  /**
   * Play only this shard of the (task, episode) work items, round-robin in task-major order as
   * vla-eval's `--shard-id/--num-shards` do.
   */
  shard?: { id: number; count: number };
  /** Extra key carrying contacts and object poses; null sends none. */
  extrasKey?: string | null;
  /** Seconds to wait for a reply before giving up, like upstream's 30 s. */
  timeoutMs?: number;
  clock?: Clock;
}

export interface BenchmarkEpisode {
  task: string;
  episode_idx: number;
  success: boolean;
  steps: number;
  /** The server's ERROR for this episode, when it failed. */
  error: string | null;
}

export interface BenchmarkResult {
  hello: WireMap;
  episodes: BenchmarkEpisode[];
}

/** One connection to a model server, requests matched by seq. */
class ServerLink {
  private seq = 0;
  private readonly waiting = new Map<number, (e: Envelope) => void>();
  private failure: Error | null = null;

  private constructor(
    private readonly ws: WebSocket,
    private readonly clock: Clock,
    private readonly timeoutMs: number,
  ) {
    ws.on("message", (data: Buffer) => {
      let env: Envelope;
      try {
        env = decodeEnvelope(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
      } catch (e) {
        this.fail(e as Error);
        return;
      }
      const w = this.waiting.get(env.seq);
      if (w) {
        this.waiting.delete(env.seq);
        w(env);
      }
    });
    ws.on("close", () => this.fail(new Error("the model server closed the connection")));
    ws.on("error", (e) => this.fail(e));
  }

  static open(url: string, clock: Clock, timeoutMs: number): Promise<ServerLink> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
      ws.once("open", () => resolve(new ServerLink(ws, clock, timeoutMs)));
      ws.once("error", (e) =>
        reject(
          new ProvaelError("policy/unavailable", `cannot connect to ${url}: ${e.message}`, {
            hint: "start the model server (provael bridge) first",
          }),
        ),
      );
    });
  }

  private fail(e: Error): void {
    this.failure ??= e;
    for (const w of this.waiting.values())
      w({ type: "error", payload: { error: e.message } as WireMap, seq: -1, timestamp: 0 });
    this.waiting.clear();
  }

  send(type: VlaEvalType, payload: WireMap): number {
    if (this.failure) throw this.failure;
    this.seq += 1;
    this.ws.send(
      encodeEnvelope({ type, payload, seq: this.seq, timestamp: this.clock.now() / 1000 }),
    );
    return this.seq;
  }

  /** Sends a request and waits for the reply with its seq (an ERROR reply included). */
  request(type: VlaEvalType, payload: WireMap): Promise<Envelope> {
    const seq = this.send(type, payload);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(seq);
        reject(
          new ProvaelError("policy/timeout", `no reply to '${type}' within ${this.timeoutMs} ms`),
        );
      }, this.timeoutMs);
      this.waiting.set(seq, (env) => {
        clearTimeout(timer);
        resolve(env);
      });
    });
  }

  close(): void {
    this.ws.close();
  }
}

/** Contacts and object poses, as `provael_libero.py` sends them. */
function extrasOf(state: SimState): WireMap {
  const m = wireMap();
  if (state.contacts)
    m.contacts = state.contacts.map((c) => ({
      a: c.a,
      b: c.b,
      force: c.force,
    })) as unknown as WireMap[];
  if (state.objects) {
    const objects = wireMap();
    for (const [name, pose] of Object.entries(state.objects))
      objects[name] = { pos: [...pose.pos], quat: [...pose.quat] } as unknown as WireMap;
    m.objects = objects;
  }
  return m;
}

/**
 * LIBERO's `states` layout: the end-effector position at full precision (float64, as the
 * simulator has it), then the suite's own axis-angle and finger entries.
 */
function statesOf(result: StepResult): number[] {
  const s = Array.from(result.obs.state);
  const eef = result.state.eefPos;
  if (eef) for (let i = 0; i < 3; i++) s[i] = eef[i] as number;
  return s;
}

function errorText(env: Envelope): string {
  return typeof env.payload.error === "string" ? env.payload.error : "unspecified error";
}

/** Plays every (task, episode) against the server; an episode the server fails is recorded. */
export async function playBenchmark(o: BenchmarkOptions): Promise<BenchmarkResult> {
  const clock = o.clock ?? systemClock;
  const suite = suites.get(o.suite);
  const specs = new Map(suite.tasks().map((t) => [t.id, t]));
  for (const t of o.tasks) if (!specs.has(t)) suites.get(o.suite).predicates(t);
  const link = await ServerLink.open(o.serverUrl, clock, o.timeoutMs ?? 30_000);
  const extrasKey = o.extrasKey === undefined ? "provael_extras" : o.extrasKey;
  try {
    const hp = wireMap();
    hp.harness_version = `provael ${TOOL_VERSION}`;
    hp.protocol_version = 1;
    hp.benchmark = o.suite;
    const hello = await link.request("hello", hp);
    if (hello.type !== "hello")
      throw new ProvaelError("policy/protocol", `HELLO failed: ${errorText(hello)}`);
    const params = isWireMap(hello.payload.observation_params)
      ? hello.payload.observation_params
      : wireMap();
    const sendState = params.send_state !== false;
    const cameras = ["agentview", ...(params.send_wrist_image === true ? ["wrist"] : [])].filter(
      (c) => suite.capabilities.cameras.includes(c),
    );
    const instance = await suite.open({ cameras });
    const episodes: BenchmarkEpisode[] = [];
    const work = o.tasks.flatMap((t) => o.episodes.map((idx) => [t, idx] as const));
    const mine = o.shard
      ? work.filter((_, i) => i % (o.shard as { count: number }).count === o.shard?.id)
      : work;
    try {
      for (const [taskId, idx] of mine) {
        const spec = specs.get(taskId);
        if (!spec) continue;
        const task = wireMap();
        task.name = taskId;
        task.episode_idx = idx;
        task.task_description = spec.instruction;
        const start = wireMap();
        start.task = task;
        link.send("episode_start", start);
        let result = await instance.reset({
          task: taskId,
          scene: ((o.scenePin ?? 0) + idx) % spec.scenes,
          seed: idx,
        });
        const horizon = o.horizon ?? spec.horizon;
        let success = false;
        let steps = 0;
        let error: string | null = null;
        const startedAt = clock.monotonic();
        for (let step = 0; step < horizon; step++) {
          const obs = wireMap();
          const images = wireMap();
          for (const cam of cameras) {
            const img = result.obs.images[cam];
            if (img) images[cam] = uint8Array(img.data, [img.height, img.width, img.channels]);
          }
          obs.images = images;
          obs.task_description = result.obs.instruction;
          if (sendState) {
            const s = statesOf(result);
            obs.states = float64Array(s, [s.length]);
          }
          if (extrasKey) obs[extrasKey] = extrasOf(result.state);
          const reply = await link.request("observation", obs);
          if (reply.type !== "action") {
            error = errorText(reply);
            break;
          }
          const action = Float32Array.from(toFloat64(asNdArray(reply.payload.actions, "actions")));
          result = await instance.step(action);
          steps = step + 1;
          if (result.taskSuccess) success = true;
          if (result.done) break;
        }
        if (error === null) {
          const metrics = wireMap();
          metrics.success = success;
          if (extrasKey) {
            const final = extrasOf(result.state);
            const s = statesOf(result);
            final.states = s;
            metrics[extrasKey] = final;
          }
          const end = wireMap();
          end.metrics = metrics;
          end.steps = steps;
          end.elapsed_sec = (clock.monotonic() - startedAt) / 1000;
          link.send("episode_end", end);
        }
        episodes.push({ task: taskId, episode_idx: idx, success, steps, error });
      }
    } finally {
      await instance.close();
    }
    return { hello: hello.payload, episodes };
  } finally {
    link.close();
  }
}
