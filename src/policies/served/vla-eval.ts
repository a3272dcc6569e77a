/**
 * `vla-eval`: a model server of the vla-evaluation-harness (PROTOCOLS.md §4), or
 * `provael serve-policy --protocol vla-eval`. One connection per instance, kept across episodes:
 * hello, then per episode `episode_start`, observation -> action pairs matched by seq, and
 * `episode_end`. An `error` frame fails the step but keeps the connection; a lost connection is
 * reopened (hello and episode_start again) and the observation resent.
 *
 * Why `concurrent: false`: the server keeps episode state per connection and the runner gives no
 * end-of-episode signal, so a shared instance could never tell when an episode's connection is
 * free again. One instance per runner slot owns one connection and plays its episodes in turn.
 */
import { type Clock, systemClock } from "../../core/clock.js";
import { ProvaelError } from "../../core/errors.js";
import { TOOL_VERSION } from "../../core/package-root.js";
import { definePolicy } from "../../core/registry.js";
import type {
  Action,
  EpisodeInfo,
  Observation,
  PolicyCapabilities,
  PolicyInstance,
  PolicyOptions,
  ServedModel,
} from "../../core/types.js";
import { isWireMap, type WireMap, wireMap } from "./codec/tree.js";
import {
  decodeEnvelope,
  type Envelope,
  encodeEnvelope,
  VLA_EVAL_PROTOCOL_VERSION,
  type VlaEvalType,
} from "./codec/vla-eval.js";
import { newEpisodeId, refineCapabilities, servedCapabilities, servedModelOf } from "./common.js";
import {
  decodeActions,
  encodeObservation,
  type Layout,
  layoutCameras,
  resolveLayout,
} from "./layouts.js";
import {
  authHeaders,
  markServerError,
  SERVED_OPTIONS,
  type ServedOptions,
  servedOptions,
  withRetries,
} from "./options.js";
import { type Frame, WsConnection } from "./transport.js";

class VlaEvalClient {
  private conn: WsConnection | null = null;
  private seq = 0;
  hello: WireMap | null = null;

  constructor(
    private readonly o: ServedOptions,
    private readonly clock: Clock,
  ) {}

  private send(type: VlaEvalType, payload: WireMap): number {
    if (!this.conn) throw new ProvaelError("internal/invariant", "vla-eval: send before connect");
    this.seq += 1;
    this.conn.send(
      // Raw images: every vla-eval decoder reads them, and they cost no PNG encoding per step
      // (the bridge would otherwise decode a benchmark's PNG and encode it again).
      encodeEnvelope({ type, payload, seq: this.seq, timestamp: this.clock.now() / 1000 }, "raw"),
    );
    return this.seq;
  }

  /**
   * The reply to request `seq`. Frames come back in order and a timed-out request drops the
   * connection, so any other frame (an action for another seq, a second action, a reply to a
   * notification) is the server breaking the pairing: a protocol error that ends the connection,
   * never a reply to match later. An `error` frame for a seq we sent is the server's failure.
   */
  private async reply(seq: number, want: VlaEvalType, timeoutMs: number): Promise<Envelope> {
    const conn = this.conn as WsConnection;
    let f: Frame;
    try {
      f = await conn.next(timeoutMs, `'${want}' reply`);
    } catch (e) {
      // A late reply would otherwise arrive on a connection that has moved on.
      this.drop();
      throw e;
    }
    if (f.kind === "text") {
      this.drop();
      throw new ProvaelError(
        "policy/protocol",
        `text frame from a vla-eval server: ${f.text.slice(0, 200)}`,
      );
    }
    let env: Envelope;
    try {
      env = decodeEnvelope(f.data);
    } catch (e) {
      this.drop();
      throw e;
    }
    if (env.type === "error" && env.seq >= 0 && env.seq <= this.seq) {
      const msg = typeof env.payload.error === "string" ? env.payload.error : "unspecified error";
      // An error for an earlier notification (episode_start): the reply to `seq` is still on its
      // way, so this connection is out of step and a fresh one starts the episode again.
      if (env.seq !== seq) this.drop();
      throw markServerError(
        new ProvaelError("policy/error", `the vla-eval server failed: ${msg}`, {
          details: { seq: env.seq },
          hint: "read the model server's log; a missing key or wrong shape usually means the wrong --layout",
        }),
      );
    }
    if (env.type !== want || env.seq !== seq) {
      this.drop();
      throw new ProvaelError(
        "policy/protocol",
        `expected '${want}' for seq ${seq}, got '${env.type}' seq ${env.seq}: a frame no request asked for`,
        {
          details: { expected: { type: want, seq }, got: { type: env.type, seq: env.seq } },
          hint: "the server broke request/reply pairing; its replies cannot be trusted to match requests",
        },
      );
    }
    return env;
  }

  async connect(): Promise<void> {
    this.conn?.close();
    this.conn = await WsConnection.open(this.o.url, {
      headers: authHeaders(this.o),
      connectTimeoutMs: this.o.connectTimeoutMs,
      maxFrameBytes: this.o.maxFrameBytes,
    });
    const p = wireMap();
    p.harness_version = `provael ${TOOL_VERSION}`;
    p.protocol_version = VLA_EVAL_PROTOCOL_VERSION;
    p.benchmark = "provael";
    try {
      const env = await this.reply(this.send("hello", p), "hello", this.o.connectTimeoutMs);
      const version = env.payload.protocol_version;
      if (version !== VLA_EVAL_PROTOCOL_VERSION) {
        throw new ProvaelError(
          "policy/protocol",
          `the server speaks protocol version ${String(version)}, we speak ${VLA_EVAL_PROTOCOL_VERSION}`,
        );
      }
      this.hello = env.payload;
    } catch (e) {
      this.drop();
      throw e;
    }
  }

  get connected(): boolean {
    return this.conn?.isOpen ?? false;
  }

  drop(): void {
    this.conn?.close();
    this.conn = null;
  }

  notify(type: "episode_start" | "episode_end", payload: WireMap): void {
    this.send(type, payload);
  }

  async request(payload: WireMap): Promise<Envelope> {
    return this.reply(this.send("observation", payload), "action", this.o.callTimeoutMs);
  }
}

class VlaEvalInstance implements PolicyInstance {
  capabilities: PolicyCapabilities;
  handshake?: Readonly<Record<string, unknown>>;
  readonly servedModel: ServedModel;
  private episode: { id: string; info: EpisodeInfo; steps: number; startedAt: number } | null =
    null;
  private queue: Action[] = [];
  private readonly calls = { queries: 0, actions: 0 };

  constructor(
    private readonly client: VlaEvalClient,
    private readonly o: ServedOptions,
    private readonly layout: Layout,
    private readonly replan: number,
    private readonly clock: Clock,
  ) {
    if (client.hello) this.handshake = client.hello;
    const caps = client.hello?.capabilities;
    this.servedModel = servedModelOf(
      "vla-eval",
      client.hello,
      isWireMap(caps) ? caps.provael : undefined,
      client.hello?.model_server,
    );
    this.capabilities = refineCapabilities(
      servedCapabilities(layoutCameras(layout), replan),
      caps && typeof caps === "object" && !Array.isArray(caps)
        ? (caps as WireMap).provael
        : undefined,
      layout.context !== null,
    );
  }

  private startMessage(): WireMap {
    const e = this.episode ?? {
      id: newEpisodeId(),
      info: { task: "", seed: 0, policySeed: 0 },
      steps: 0,
      startedAt: this.clock.monotonic(),
    };
    const task = wireMap();
    task.id = e.id;
    task.name = e.info.task;
    task.task = e.info.task;
    task.seed = e.info.seed;
    task.policy_seed = e.info.policySeed;
    const p = wireMap();
    p.task = task;
    // The benchmark's recording block, forwarded as it came (a bridge in front of this server).
    if (e.info.recording) p.recording = Object.assign(wireMap(), e.info.recording) as WireMap;
    return p;
  }

  private endEpisode(): void {
    if (!this.episode || !this.client.connected) return;
    const p = wireMap();
    p.metrics = wireMap();
    p.steps = this.episode.steps;
    p.elapsed_sec = (this.clock.monotonic() - this.episode.startedAt) / 1000;
    this.client.notify("episode_end", p);
  }

  /** Connects (hello) and starts the current episode, with retries. */
  private async ensure(): Promise<void> {
    if (this.client.connected) return;
    await withRetries(this.o, () => this.client.connect());
    if (this.episode) this.client.notify("episode_start", this.startMessage());
  }

  async reset(episode: EpisodeInfo): Promise<void> {
    this.endEpisode();
    this.queue = [];
    this.episode = {
      id: newEpisodeId(),
      info: episode,
      steps: 0,
      startedAt: this.clock.monotonic(),
    };
    if (this.client.connected) this.client.notify("episode_start", this.startMessage());
    else await this.ensure();
  }

  async act(obs: Observation): Promise<Action> {
    if (this.episode) this.episode.steps += 1;
    const queued = this.queue.shift();
    if (queued) return queued;
    // A benchmark's PNG that the bridge left alone travels on as those bytes.
    const payload = encodeObservation(this.layout, obs, undefined, true);
    const env = await withRetries(
      this.o,
      async () => {
        await this.ensure();
        return this.client.request(payload);
      },
      () => this.client.drop(),
    );
    const chunk = decodeActions(this.layout, env.payload.actions, true);
    this.calls.queries += 1;
    this.calls.actions += chunk.length;
    this.queue = chunk.slice(1, this.replan);
    return chunk[0] as Action;
  }

  modelCalls(): { queries: number; actions: number } {
    return { ...this.calls };
  }

  /** A connection of its own for search attacks' queries, opened on the first one. */
  private queries: VlaEvalClient | null = null;

  /**
   * A side-effect-free prediction (search attacks): sent on a second connection, each query in
   * an episode of its own, so a server that keeps per-episode state (a chunk buffer, history)
   * answers for this observation alone and the played episode's connection is untouched.
   */
  async query(obs: Observation): Promise<Action> {
    this.queries ??= new VlaEvalClient(this.o, this.clock);
    const client = this.queries;
    const payload = encodeObservation(this.layout, obs, undefined, true);
    const env = await withRetries(
      this.o,
      async () => {
        if (!client.connected) await client.connect();
        client.notify("episode_start", this.startMessage());
        return client.request(payload);
      },
      () => client.drop(),
    );
    return decodeActions(this.layout, env.payload.actions, true)[0] as Action;
  }

  close(): void {
    this.endEpisode();
    this.client.drop();
    this.queries?.drop();
  }
}

export const vlaEvalPolicy = definePolicy({
  options: SERVED_OPTIONS,
  id: "vla-eval",
  evidence: "served-model",
  description:
    "A model server of the vla-evaluation-harness (msgpack over websocket): --policy-url ws://HOST:PORT",
  capabilities: servedCapabilities(["agentview", "wrist"], 1),
  suites: [],
  concurrent: false,
  ioBound: true,
  async load(options: PolicyOptions): Promise<PolicyInstance> {
    const o = servedOptions(options, ["ws:", "wss:"], "vla-eval");
    const layout = resolveLayout(o.layout ?? "vla-eval");
    const injected = options.extra?.clock as Clock | undefined;
    // Tests inject a Clock for the envelope timestamps; runs use the system clock.
    const clock = typeof injected?.now === "function" ? injected : systemClock;
    const client = new VlaEvalClient(o, clock);
    try {
      await withRetries(o, () => client.connect());
    } catch (e) {
      throw new ProvaelError(
        "policy/load",
        `cannot reach the vla-eval server at ${o.shownUrl}: ${(e as Error).message}`,
        {
          cause: e,
          hint: "start the model server first (see docs/served-policies.md), then rerun",
        },
      );
    }
    return new VlaEvalInstance(client, o, layout, o.replan ?? layout.replan, clock);
  },
});
