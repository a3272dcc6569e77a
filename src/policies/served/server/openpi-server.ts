/**
 * An openpi-conformant websocket policy server (PROTOCOLS.md §1) in front of an in-process policy:
 * metadata frame first, then strict request/reply; any failure sends one text frame and closes
 * with 1011 and upstream's reason; `GET /healthz` answers `OK\n`.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer } from "ws";
import { ProvaelError } from "../../../core/errors.js";
import { decodeOpenpi, encodeOpenpi } from "../codec/openpi.js";
import { isWireMap, type WireMap, wireMap } from "../codec/tree.js";
import { EPISODE_KEY, encodeActions } from "../layouts.js";
import type { PolicyHost } from "./host.js";
import {
  Backlog,
  hostForUrl,
  listen,
  newHttpServer,
  type RunningServer,
  shutdown,
} from "./http.js";
import { type Inflow, watchWebSocket } from "./intake.js";

/** Upstream's close reason after an error, byte for byte. */
export const OPENPI_ERROR_REASON = "Internal server error. Traceback included in previous frame.";

/** The text frame we send for a failure: the error, without server paths. */
function errorText(e: unknown): string {
  const err =
    e instanceof ProvaelError
      ? `ProvaelError[${e.code}]: ${e.message}`
      : e instanceof Error
        ? `${e.name}: ${e.message}`
        : String(e);
  return `Traceback (most recent call last):\n  provael serve-policy (openpi)\n${err}\n`;
}

export async function startOpenpiServer(
  host: PolicyHost,
  at: { host: string; port: number },
): Promise<RunningServer> {
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: host.maxFrameBytes,
  });
  const http = newHttpServer((req, res) => {
    if (req.method === "GET" && req.url?.split("?")[0] === "/healthz") {
      res.writeHead(200, { "content-type": "text/plain", "content-length": 3 });
      res.end("OK\n");
      return;
    }
    // Like the websockets library: every other plain HTTP request lacks the upgrade.
    res.writeHead(426, { "content-type": "text/plain", upgrade: "websocket" });
    res.end("Failed to open a WebSocket connection: did not receive a valid HTTP request.\n");
  });
  http.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    wss.handleUpgrade(req, socket, head, (ws) =>
      serve(host, ws, watchWebSocket(host.intake, ws, socket)),
    );
  });
  const addr = await listen(http, at.host, at.port);
  return {
    protocol: "openpi",
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
  // Requests without an episode id share this connection's session (one episode per connection).
  const anonymous = host.session();
  let chain: Promise<void> = Promise.resolve();
  let failed = false;
  let prevTotalMs: number | null = null;
  // openpi is strict request/reply; a peer that pipelines frames is paused, not buffered.
  const backlog = new Backlog(ws, host.maxFrameBytes);
  const metadata = wireMap();
  metadata.provael = host.describe("openpi");
  ws.send(encodeOpenpi(metadata), { binary: true });

  const fail = (e: unknown) => {
    if (failed) return;
    failed = true;
    if (ws.readyState !== WebSocket.OPEN) return;
    ws.send(errorText(e));
    ws.close(1011, OPENPI_ERROR_REASON);
  };

  ws.on("message", (data: Buffer, isBinary: boolean) => {
    if (failed) return;
    if (!isBinary) {
      fail(
        new ProvaelError("policy/protocol", "received a text frame; requests are binary msgpack"),
      );
      return;
    }
    const started = host.clock.monotonic();
    const unhold = backlog.hold(data.length);
    const unbudget = intake.hold(data.length);
    const release = () => {
      unhold();
      unbudget();
    };
    // Replies go out in request order, as openpi pairs them by order.
    chain = chain
      .then(async () => {
        if (failed) return;
        const req = decodeOpenpi(
          new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
          host.decodeLimits,
        );
        if (!isWireMap(req)) throw new ProvaelError("policy/protocol", "the request is not a map");
        const ep = req[EPISODE_KEY];
        const session =
          isWireMap(ep) && typeof ep.id === "string" && ep.id.length > 0
            ? host.episodeSession(ep.id)
            : anonymous;
        const t0 = host.clock.monotonic();
        const action = await session.serial(() => session.act(req));
        const inferMs = host.clock.monotonic() - t0;
        const reply: WireMap = wireMap();
        reply[host.layout.actions.key] = encodeActions(host.layout, [action]);
        reply.policy_timing = { infer_ms: inferMs } as WireMap;
        const timing: WireMap = wireMap();
        timing.infer_ms = host.clock.monotonic() - started;
        if (prevTotalMs !== null) timing.prev_total_ms = prevTotalMs;
        reply.server_timing = timing;
        if (ws.readyState === WebSocket.OPEN) ws.send(encodeOpenpi(reply), { binary: true });
        prevTotalMs = host.clock.monotonic() - started;
      })
      .catch(fail)
      .finally(release);
  });
  ws.on("close", () => anonymous.end());
  ws.on("error", () => anonymous.end());
}
