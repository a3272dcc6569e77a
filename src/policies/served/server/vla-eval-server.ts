/**
 * A vla-evaluation-harness model server (PROTOCOLS.md §4) in front of an in-process policy:
 * hello with specs, episode_start resets, observation -> action with the seq echoed, error frames
 * that keep the connection open, `GET /health` and `GET /config`.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer } from "ws";
import { TOOL_VERSION } from "../../../core/package-root.js";
import { float32Array } from "../codec/ndarray.js";
import { isWireMap, type WireMap, wireMap } from "../codec/tree.js";
import {
  actionSpec7,
  decodeEnvelope,
  type Envelope,
  encodeEnvelope,
  VLA_EVAL_PROTOCOL_VERSION,
  type VlaEvalType,
} from "../codec/vla-eval.js";
import { readEpisode } from "../layouts.js";
import type { PolicyHost } from "./host.js";
import {
  Backlog,
  hostForUrl,
  listen,
  newHttpServer,
  type RunningServer,
  sendJson,
  shutdown,
} from "./http.js";
import { type Inflow, watchWebSocket } from "./intake.js";

/** The action and observation specs our 7-D suites follow, in vla-eval's vocabulary. */
function specs(host: PolicyHost): WireMap {
  const m = wireMap();
  m.action_spec = actionSpec7();
  const obs: WireMap = wireMap();
  for (const cam of host.policy.capabilities.cameras)
    obs[cam] = { name: cam, dims: 3, format: "rgb_hwc_uint8" } as unknown as WireMap;
  if (host.policy.capabilities.readsState)
    obs.state = {
      name: "state",
      dims: 0,
      format: "float32",
      description: "the suite's state vector",
    } as unknown as WireMap;
  m.observation_spec = obs;
  // What the benchmark must send for the layout to read (vla-eval's orchestrator merges these
  // into the benchmark's parameters, PROTOCOLS.md §4.5): the state vector the layout requires,
  // and the wrist camera when the policy reads it. Without `send_state` a stock LIBERO config
  // sends no `states`, and every observation fails.
  const params = wireMap();
  if (host.layout.state.length > 0) params.send_state = true;
  const reads = host.policy.capabilities.cameras;
  if (
    host.layout.images.some(
      (i) => i.key[0] === "images" && i.key[1] === "wrist" && reads.includes(i.camera),
    )
  )
    params.send_wrist_image = true;
  if (Object.keys(params).length > 0) m.observation_params = params;
  return m;
}

export async function startVlaEvalServer(
  host: PolicyHost,
  at: { host: string; port: number },
): Promise<RunningServer> {
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: host.maxFrameBytes,
  });
  const http = newHttpServer((req, res) => {
    const path = req.url?.split("?")[0];
    if (req.method === "GET" && path === "/health") return sendJson(res, 200, '{"status": "ok"}');
    if (req.method === "GET" && path === "/config")
      return sendJson(res, 200, '{"max_batch_size": 1, "max_wait_time": 0.0}');
    res.writeHead(426, { "content-type": "text/plain", upgrade: "websocket" });
    res.end("WebSocket upgrade expected.\n");
  });
  http.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    wss.handleUpgrade(req, socket, head, (ws) =>
      serve(host, ws, watchWebSocket(host.intake, ws, socket)),
    );
  });
  const addr = await listen(http, at.host, at.port);
  return {
    protocol: "vla-eval",
    host: at.host,
    port: addr.port,
    url: `ws://${hostForUrl(at.host)}:${addr.port}`,
    async close() {
      for (const c of wss.clients) c.terminate();
      wss.close();
      await shutdown(http);
    },
  };
}

function serve(host: PolicyHost, ws: WebSocket, intake: Inflow): void {
  const session = host.session();
  const send = (type: VlaEvalType, payload: WireMap, seq: number) => {
    if (ws.readyState !== WebSocket.OPEN) return;
    ws.send(encodeEnvelope({ type, payload, seq, timestamp: host.clock.now() / 1000 }), {
      binary: true,
    });
  };
  const error = (what: string, e: unknown, seq: number) => {
    const name = e instanceof Error ? e.name : "Error";
    const message = e instanceof Error ? e.message : String(e);
    const p = wireMap();
    p.error = `${what}: ${name}: ${message}`;
    send("error", p, seq);
  };

  // Frames wait undecoded, one decoded at a time; a peer that sends faster than the policy
  // answers is paused once a frame's worth of bytes is waiting (the protocol lets a client send
  // episode_start and an observation back to back, so a small backlog is normal).
  const backlog = new Backlog(ws, host.maxFrameBytes);
  ws.on("message", (data: Buffer, isBinary: boolean) => {
    const unhold = backlog.hold(data.length);
    const unbudget = intake.hold(data.length);
    const release = () => {
      unhold();
      unbudget();
    };
    let seq = 0;
    void session
      .serial(async () => {
        let env: Envelope;
        try {
          if (!isBinary) throw new Error("text frames are not part of the protocol");
          env = decodeEnvelope(
            new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
            host.decodeLimits,
          );
        } catch (e) {
          // The connection stays open: an error frame, then the next request.
          error("decode_failed", e, 0);
          return;
        }
        seq = env.seq;
        switch (env.type) {
          case "hello": {
            const p = wireMap();
            p.harness_version = TOOL_VERSION;
            p.protocol_version = VLA_EVAL_PROTOCOL_VERSION;
            p.model_server = "ProvaelServedPolicy";
            const caps = wireMap();
            caps.provael = host.describe("vla-eval");
            p.capabilities = caps;
            Object.assign(p, specs(host));
            send("hello", p, env.seq);
            return;
          }
          case "episode_start": {
            try {
              const task = env.payload.task;
              const ep = isWireMap(task) ? readEpisode(task) : null;
              await session.startEpisode(
                ep?.info ?? { task: "", seed: 0, policySeed: 0 },
                ep?.id ?? null,
              );
            } catch (e) {
              error("episode_start_failed", e, env.seq);
            }
            return;
          }
          case "observation": {
            try {
              const action = await session.act(env.payload);
              const p = wireMap();
              p.actions = float32Array(action, [action.length]);
              send("action", p, env.seq);
            } catch (e) {
              error("observation_failed", e, env.seq);
            }
            return;
          }
          case "episode_end":
            session.restart();
            return;
          default:
            error("unexpected_message", new Error(`a client does not send '${env.type}'`), env.seq);
        }
      })
      .catch((e) => error("internal", e, seq))
      .finally(release);
  });
  ws.on("close", () => session.end());
  ws.on("error", () => session.end());
}
