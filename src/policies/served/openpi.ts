/**
 * `openpi`: a policy served by an openpi websocket server (PROTOCOLS.md §1), or by
 * `provael serve-policy --protocol openpi`.
 *
 * One instance serves every concurrent episode of a run (`concurrent: true`). Each request
 * borrows an idle connection from a small pool (opened on demand, metadata frame read first) and
 * returns it after the reply, so a run holds as many connections as it has requests in flight.
 * openpi has no reset message: every observation carries `provael/episode`
 * ({id, task, seed, policy_seed}), which upstream transforms ignore and our server keys its
 * per-episode policy state on (it resets on a new id). Each episode executes the first `replan`
 * actions of a chunk before asking again.
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
  ServedModel,
} from "../../core/types.js";
import { decodeOpenpi, encodeOpenpi } from "./codec/openpi.js";
import { isWireMap, type WireValue } from "./codec/tree.js";
import {
  EpisodeSessions,
  newEpisodeId,
  refineCapabilities,
  servedCapabilities,
  servedModelOf,
} from "./common.js";
import {
  decodeActions,
  type EpisodeTag,
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

/** How long we wait for the 1011 close that follows a server's error text frame. */
const CLOSE_AFTER_ERROR_MS = 1000;
/** Most characters of a server traceback we put in an error message. */
const TRACEBACK_CHARS = 2000;

/** One connection whose metadata frame has been read. */
export interface OpenpiConn {
  ws: WsConnection;
  metadata: WireValue;
}

/** Opens a connection and reads the metadata frame the server sends before anything else. */
export async function openOpenpi(o: ServedOptions): Promise<OpenpiConn> {
  const ws = await WsConnection.open(o.url, {
    headers: authHeaders(o),
    connectTimeoutMs: o.connectTimeoutMs,
    maxFrameBytes: o.maxFrameBytes,
    // The metadata frame is the one frame sent unasked; after it, one reply per request.
    strict: { greeting: 1 },
  });
  try {
    const f = await ws.next(o.connectTimeoutMs, "metadata frame");
    if (f.kind === "text") throw await serverError(ws, f.text);
    const metadata = decodeOpenpi(f.data);
    if (!isWireMap(metadata))
      throw new ProvaelError(
        "policy/protocol",
        `${o.shownUrl} sent a metadata frame that is not a map`,
      );
    return { ws, metadata };
  } catch (e) {
    ws.close();
    throw e;
  }
}

/** A text frame is the server's traceback; upstream closes with 1011 right after it. */
async function serverError(ws: WsConnection, text: string): Promise<ProvaelError> {
  await ws.waitClosed(CLOSE_AFTER_ERROR_MS);
  ws.close();
  const shown = text.length > TRACEBACK_CHARS ? `…${text.slice(-TRACEBACK_CHARS)}` : text;
  return markServerError(
    new ProvaelError("policy/error", `the policy server failed: ${shown.trim()}`, {
      details: { traceback: shown, close: ws.closeInfo },
      hint: "read the server's traceback; a missing key or a wrong shape usually means the wrong --layout",
    }),
  );
}

/** Idle connections, each used by one request at a time (replies pair with requests by order). */
class ConnectionPool {
  private readonly idle: OpenpiConn[] = [];
  private readonly open = new Set<OpenpiConn>();
  private closed = false;

  constructor(private readonly o: ServedOptions) {}

  add(c: OpenpiConn): void {
    this.open.add(c);
    this.release(c);
  }

  async acquire(): Promise<OpenpiConn> {
    for (let c = this.idle.pop(); c; c = this.idle.pop()) {
      if (c.ws.isOpen) return c;
      this.discard(c);
      // A frame arrived while the connection sat idle (a second reply to its last request): the
      // server does not pair replies with requests, and the request about to go is told so.
      if (c.ws.protocolFailure) throw c.ws.protocolFailure;
    }
    const c = await openOpenpi(this.o);
    this.open.add(c);
    return c;
  }

  release(c: OpenpiConn): void {
    if (this.closed || !c.ws.isOpen) this.discard(c);
    else this.idle.push(c);
  }

  discard(c: OpenpiConn): void {
    c.ws.close();
    this.open.delete(c);
  }

  close(): void {
    this.closed = true;
    for (const c of this.open) c.ws.close();
    this.open.clear();
    this.idle.length = 0;
  }
}

interface Episode {
  tag: EpisodeTag;
  /** Actions left from the last chunk. */
  queue: Action[];
}

class OpenpiInstance implements PolicyInstance {
  readonly capabilities: PolicyCapabilities;
  readonly servedModel: ServedModel;
  private readonly sessions = new EpisodeSessions<Episode>();
  private readonly calls = { queries: 0, actions: 0 };

  constructor(
    private readonly o: ServedOptions,
    private readonly layout: Layout,
    private readonly replan: number,
    private readonly pool: ConnectionPool,
    metadata: WireValue,
  ) {
    const provael = isWireMap(metadata) ? metadata.provael : undefined;
    this.capabilities = refineCapabilities(
      servedCapabilities(layoutCameras(layout), replan),
      provael,
      layout.context !== null,
    );
    this.servedModel = servedModelOf("openpi", metadata, provael);
  }

  reset(episode: EpisodeInfo): void {
    this.sessions.begin({ tag: { id: newEpisodeId(), episode }, queue: [] });
  }

  async act(obs: Observation): Promise<Action> {
    const ep = this.sessions.current("openpi");
    const queued = ep.queue.shift();
    if (queued) return queued;
    const request = encodeOpenpi(encodeObservation(this.layout, obs, ep.tag));
    const chunk = await this.call(request);
    this.calls.queries += 1;
    this.calls.actions += chunk.length;
    ep.queue = chunk.slice(1, this.replan);
    return chunk[0] as Action;
  }

  modelCalls(): { queries: number; actions: number } {
    return { ...this.calls };
  }

  /**
   * A side-effect-free prediction (search attacks): openpi's server answers each request on its
   * own, so a query is one request whose chunk leaves the episode's queue alone.
   */
  async query(obs: Observation): Promise<Action> {
    const ep = this.sessions.current("openpi");
    const request = encodeOpenpi(encodeObservation(this.layout, obs, ep.tag));
    const chunk = await this.call(request);
    return chunk[0] as Action;
  }

  /** One request on a pooled connection, retried; a failed connection is discarded. */
  private call(request: Uint8Array): Promise<Action[]> {
    return withRetries(this.o, async () => {
      const conn = await this.pool.acquire();
      try {
        const actions = await this.infer(conn, request);
        this.pool.release(conn);
        return actions;
      } catch (e) {
        this.pool.discard(conn);
        throw e;
      }
    });
  }

  private async infer(conn: OpenpiConn, request: Uint8Array): Promise<Action[]> {
    conn.ws.send(request, 1);
    // A timeout is thrown from here and the caller discards the connection: a late reply
    // would otherwise pair with the next request.
    const f: Frame = await conn.ws.next(this.o.callTimeoutMs);
    if (f.kind === "text") throw await serverError(conn.ws, f.text);
    const reply = decodeOpenpi(f.data);
    // openpi has no ids: a second reply is told apart from the next request's only if it arrives
    // first. One turn of the event loop lets frames already read off the socket arrive (they
    // then have no credit and end the connection) before the connection takes another request.
    // A frame delayed past that turn cannot be told apart from a reply, by any openpi client.
    await new Promise((resolve) => setImmediate(resolve));
    if (conn.ws.protocolFailure) throw conn.ws.protocolFailure;
    if (!isWireMap(reply))
      throw new ProvaelError("policy/protocol", "the reply is not a map with an 'actions' key");
    return decodeActions(this.layout, reply[this.layout.actions.key]);
  }

  close(): void {
    this.pool.close();
  }
}

export const openpiPolicy = definePolicy({
  options: SERVED_OPTIONS,
  id: "openpi",
  evidence: "served-model",
  description:
    "A policy behind an openpi websocket server (pi0, pi0.5, or provael serve-policy): --policy-url ws://HOST:PORT",
  capabilities: servedCapabilities(["agentview", "wrist"], 5),
  suites: [],
  concurrent: true,
  ioBound: true,
  async load(options: PolicyOptions): Promise<PolicyInstance> {
    const o = servedOptions(options, ["ws:", "wss:"], "openpi");
    const layout = resolveLayout(o.layout ?? "libero");
    const replan = o.replan ?? layout.replan;
    let first: OpenpiConn;
    try {
      first = await withRetries(o, () => openOpenpi(o));
    } catch (e) {
      throw new ProvaelError(
        "policy/load",
        `cannot reach the openpi server at ${o.shownUrl}: ${(e as Error).message}`,
        { cause: e, hint: "start the server first (see docs/served-policies.md), then rerun" },
      );
    }
    const pool = new ConnectionPool(o);
    pool.add(first);
    return new OpenpiInstance(o, layout, replan, pool, first.metadata);
  },
});
