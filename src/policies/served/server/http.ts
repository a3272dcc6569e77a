/** HTTP plumbing shared by the protocol servers: listening, body limits, JSON replies. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { WebSocket } from "ws";
import { ProvaelError } from "../../../core/errors.js";

export interface RunningServer {
  protocol: string;
  host: string;
  port: number;
  /** The address a client passes as --policy-url. */
  url: string;
  close(): Promise<void>;
}

export function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once("error", (e) =>
      reject(
        new ProvaelError("config/invalid", `cannot listen on ${host}:${port}: ${e.message}`, {
          cause: e,
          hint: "pick another --port (0 picks a free one) or --host",
        }),
      ),
    );
    server.listen(port, host, () => resolve(server.address() as AddressInfo));
  });
}

/** Closes a server and every connection it holds. */
export function shutdown(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export function newHttpServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Server {
  return createServer(handler);
}

export function sendJson(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}

export function hostForUrl(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/**
 * The request bytes one WebSocket connection holds before they are answered. Over `cap` the
 * socket is paused, so TCP pushes back on a peer that sends faster than the policy answers,
 * instead of queueing its frames in our heap; it resumes once the backlog drains.
 */
export class Backlog {
  private held = 0;

  constructor(
    private readonly ws: WebSocket,
    private readonly cap: number,
  ) {}

  /** Holds `bytes` until the returned function is called (once). */
  hold(bytes: number): () => void {
    this.held += bytes;
    if (this.held > this.cap && !this.ws.isPaused) this.ws.pause();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held -= bytes;
      if (this.held <= this.cap && this.ws.isPaused) this.ws.resume();
    };
  }

  get bytes(): number {
    return this.held;
  }
}
