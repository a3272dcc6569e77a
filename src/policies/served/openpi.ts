/**
 * `openpi`: a policy served by an openpi websocket server (PROTOCOLS.md §1), or by
 * `provael serve-policy --protocol openpi`.
 *
 * One connection per episode: `reset()` takes a fresh connection (opened ahead of time, its
 * metadata frame already read) and closes the last one, so a server that resets its policy when a
 * connection opens (ours does) sees exactly one episode per connection. Each observation also
 * carries `provael/episode` ({id, task, seed, policy_seed}), which upstream transforms ignore.
 *
 * Why `concurrent: false`: the runner shares a concurrent instance across episodes but `act(obs)`
 * does not say which episode it serves, so a shared instance could not route an observation to its
 * episode's connection. One instance per slot keeps one episode (and one connection) in flight per
 * instance; the run still has `--concurrency` episodes in flight at once.
 */
import { ProvaelError } from "../../core/errors.js";
import { definePolicy } from "../../core/registry.js";
import type {
  Action,
  EpisodeInfo,
  Observation,
  PolicyCapabilities,
  PolicyInstance,
  PolicyOptions,
} from "../../core/types.js";
import { decodeOpenpi, encodeOpenpi } from "./codec/openpi.js";
import { isWireMap, type WireValue } from "./codec/tree.js";
import { newEpisodeId, refineCapabilities, servedCapabilities } from "./common.js";
import { decodeActions, type EpisodeTag, encodeObservation, type Layout, layoutCameras, resolveLayout } from "./layouts.js";
import {
  authHeaders,
  type ErrorBudget,
  errorBudget,
  type ServedOptions,
  servedOptions,
  withRetries,
} from "./options.js";
import { WsConnection } from "./transport.js";

/** How long we wait for the 1011 close that follows a server's error text frame. */
const CLOSE_AFTER_ERROR_MS = 1000;
/** Most characters of a server traceback we put in an error message. */
const TRACEBACK_CHARS = 2000;

/** One connection whose metadata frame has been read. */
interface OpenpiConn {
  ws: WsConnection;
  metadata: WireValue;
}

async function openConn(o: ServedOptions): Promise<OpenpiConn> {
  const ws = await WsConnection.open(o.url, {
    headers: authHeaders(o),
    connectTimeoutMs: o.connectTimeoutMs,
    maxFrameBytes: o.maxFrameBytes,
  });
  try {
    // The server speaks first: one binary metadata frame, before we may send anything.
    const f = await ws.next(o.connectTimeoutMs, "metadata frame");
    if (f.kind === "text") throw await serverError(ws, f.text);
    const metadata = decodeOpenpi(f.data);
    if (!isWireMap(metadata))
      throw new ProvaelError("policy/protocol", `${o.url} sent a metadata frame that is not a map`);
    return { ws, metadata };
  } catch (e) {
    ws.close();
    throw e;
  }
}

/** A text frame is the server's traceback; the 1011 close follows it. */
async function serverError(ws: WsConnection, text: string): Promise<ProvaelError> {
  await ws.waitClosed(CLOSE_AFTER_ERROR_MS);
  ws.close();
  const shown = text.length > TRACEBACK_CHARS ? `…${text.slice(-TRACEBACK_CHARS)}` : text;
  return new ProvaelError("policy/error", `the policy server failed: ${shown.trim()}`, {
    details: { traceback: shown, close: ws.closeInfo },
    hint: "read the server's traceback above; a missing key or wrong shape usually means the wrong --layout",
  });
}

class OpenpiInstance implements PolicyInstance {
  capabilities: PolicyCapabilities;
  private conn: OpenpiConn | null = null;
  private spare: Promise<OpenpiConn> | null = null;
  private queue: Action[] = [];
  private tag: EpisodeTag | null = null;
  private closed = false;

  constructor(
    private readonly o: ServedOptions,
    private readonly layout: Layout,
    private readonly replan: number,
    private readonly budget: ErrorBudget,
    first: OpenpiConn,
  ) {
    this.capabilities = refineCapabilities(
      servedCapabilities(layoutCameras(layout), replan),
      isWireMap(first.metadata) ? first.metadata.provael : undefined,
      layout.context !== null,
    );
    this.spare = Promise.resolve(first);
  }

  /** Takes the pre-opened connection (or opens one) and starts opening the next. */
  private async takeConn(): Promise<OpenpiConn> {
    const spare = this.spare;
    this.spare = null;
    let conn: OpenpiConn | null = null;
    if (spare) conn = await spare.catch(() => null);
    if (!conn || !conn.ws.isOpen) {
      conn?.ws.close();
      conn = await withRetries(this.o, () => openConn(this.o));
    }
    if (!this.closed) {
      const next = openConn(this.o);
      // A spare that fails is simply not used; the next reset opens its own.
      next.catch(() => {});
      this.spare = next;
    }
    return conn;
  }

  async reset(episode: EpisodeInfo): Promise<void> {
    this.budget.check("openpi");
    this.conn?.ws.close();
    this.conn = null;
    this.queue = [];
    this.tag = { id: newEpisodeId(), episode };
    try {
      this.conn = await this.takeConn();
    } catch (e) {
      this.budget.record();
      throw e;
    }
  }

  async act(obs: Observation): Promise<Action> {
    const queued = this.queue.shift();
    if (queued) return queued;
    this.budget.check("openpi");
    const request = encodeOpenpi(encodeObservation(this.layout, obs, this.tag ?? undefined));
    let chunk: Action[];
    try {
      chunk = await withRetries(
        this.o,
        async () => {
          this.conn ??= await openConn(this.o);
          return this.infer(this.conn, request);
        },
        () => {
          this.conn?.ws.close();
          this.conn = null;
        },
      );
    } catch (e) {
      this.budget.record();
      if (this.conn && !this.conn.ws.isOpen) this.conn = null;
      throw e;
    }
    this.queue = chunk.slice(1, this.replan);
    return chunk[0] as Action;
  }

  private async infer(conn: OpenpiConn, request: Uint8Array): Promise<Action[]> {
    conn.ws.send(request);
    let f: Awaited<ReturnType<WsConnection["next"]>>;
    try {
      f = await conn.ws.next(this.o.callTimeoutMs);
    } catch (e) {
      // A late reply would pair with the next request: this connection is done.
      conn.ws.close();
      throw e;
    }
    if (f.kind === "text") {
      this.conn = null;
      throw await serverError(conn.ws, f.text);
    }
    let reply: WireValue;
    try {
      reply = decodeOpenpi(f.data);
      if (!isWireMap(reply))
        throw new ProvaelError("policy/protocol", "the reply is not a map with an 'actions' key");
      return decodeActions(this.layout, reply[this.layout.actions.key]);
    } catch (e) {
      conn.ws.close();
      this.conn = null;
      throw e;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.conn?.ws.close();
    this.conn = null;
    const spare = this.spare;
    this.spare = null;
    if (spare) (await spare.catch(() => null))?.ws.close();
  }
}

export const openpiPolicy = definePolicy({
  id: "openpi",
  description:
    "A policy behind an openpi websocket server (pi0, pi0.5, or provael serve-policy): --policy-url ws://HOST:PORT",
  capabilities: servedCapabilities(["agentview", "wrist"], 5),
  suites: [],
  concurrent: false,
  async load(options: PolicyOptions): Promise<PolicyInstance> {
    const o = servedOptions(options, ["ws:", "wss:"], "openpi");
    const layout = resolveLayout(o.layout ?? "libero");
    const replan = o.replan ?? layout.replan;
    const budget = errorBudget(options, o.maxErrors);
    budget.check("openpi");
    let first: OpenpiConn;
    try {
      first = await withRetries(o, () => openConn(o));
    } catch (e) {
      throw new ProvaelError(
        "policy/load",
        `cannot reach the openpi server at ${o.url}: ${(e as Error).message}`,
        { cause: e, hint: "start the server first (see docs/served-policies.md), then rerun" },
      );
    }
    return new OpenpiInstance(o, layout, replan, budget, first);
  },
});
