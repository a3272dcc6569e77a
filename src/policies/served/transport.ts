/**
 * A WebSocket client connection with a bounded receive queue and timeouts, shared by the openpi
 * and vla-eval clients. It turns every way a socket can fail into a ProvaelError, marking the
 * ones a fresh connection may fix (refused, reset, closed, timed out) as retryable.
 *
 * A server may not send frames nobody asked for. With `strict` (openpi: no ids, replies pair with
 * requests by order) every frame needs a credit, granted by `send(data, 1)` or the greeting
 * count; a frame without one is a protocol error that ends the connection, so a second reply can
 * never pair with a later request. Without it (vla-eval: frames carry the seq they answer, and an
 * `error` may follow a notification) frames queue for the protocol to judge, at most
 * `MAX_QUEUED` of them and a frame cap's worth of bytes; past that the connection ends.
 */
import WebSocket from "ws";
import { ProvaelError } from "../../core/errors.js";
import { redactUrl } from "../../core/redact.js";
import { markRetryable } from "./options.js";

export type Frame = { kind: "binary"; data: Uint8Array } | { kind: "text"; text: string };

export interface ConnectOptions {
  headers: Record<string, string>;
  connectTimeoutMs: number;
  maxFrameBytes: number;
  /** Frames must be asked for; `greeting` is how many the server sends unasked on connect. */
  strict?: { greeting: number };
}

interface Waiter {
  resolve: (f: Frame) => void;
  reject: (e: unknown) => void;
  timer: NodeJS.Timeout;
}

/** The close code `ws` uses when a frame exceeds `maxPayload`. */
const TOO_BIG = 1009;
/** Frames held that no one is waiting for; both protocols need at most two. */
export const MAX_QUEUED = 4;

export class WsConnection {
  private readonly frames: Frame[] = [];
  private queuedBytes = 0;
  private waiter: Waiter | null = null;
  private failure: ProvaelError | null = null;
  /** Frames the server may still send (strict mode), else null. */
  private credits: number | null;
  /** The protocol error that ended this connection (an unasked or excess frame), if any. */
  protocolFailure: ProvaelError | null = null;
  /** The close code and reason, once closed. */
  closeInfo: { code: number; reason: string } | null = null;
  private closedWaiters: Array<() => void> = [];

  private constructor(
    private readonly ws: WebSocket,
    readonly url: string,
    private readonly maxFrameBytes: number,
    strict: { greeting: number } | undefined,
  ) {
    this.credits = strict ? strict.greeting : null;
    ws.on("message", (data: WebSocket.RawData, isBinary: boolean) => {
      if (this.failure) return;
      const bytes = rawBytes(data);
      this.push(
        isBinary
          ? { kind: "binary", data: bytes }
          : { kind: "text", text: Buffer.from(bytes).toString("utf8") },
      );
    });
    ws.on("error", (e: Error & { code?: string }) => {
      if (e.code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH" || /max payload/i.test(e.message)) {
        this.fail(frameTooBig(url, this.maxFrameBytes));
      } else this.fail(lost(url, e.message, e));
    });
    ws.on("close", (code: number, reason: Buffer) => {
      this.closeInfo = { code, reason: reason.toString("utf8") };
      this.fail(
        code === TOO_BIG
          ? frameTooBig(url, this.maxFrameBytes)
          : lost(
              url,
              `closed with code ${code}${reason.length > 0 ? ` (${reason.toString("utf8")})` : ""}`,
            ),
      );
      for (const w of this.closedWaiters.splice(0)) w();
    });
  }

  /** Opens a connection; rejects with a retryable error when refused or too slow. */
  static open(url: string, o: ConnectOptions): Promise<WsConnection> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const ws = new WebSocket(url, {
        headers: o.headers,
        perMessageDeflate: false,
        maxPayload: o.maxFrameBytes,
        handshakeTimeout: o.connectTimeoutMs,
        // Masking protects browsers' proxies from cache poisoning; a zero mask is valid and lets
        // both ends skip XOR-ing every byte of 300 KB observations.
        generateMask: (mask: Buffer) => {
          mask.fill(0);
        },
      });
      // Messages name the server without the credentials a URL may carry.
      const shown = redactUrl(url);
      const conn = new WsConnection(ws, shown, o.maxFrameBytes, o.strict);
      const timer = setTimeout(() => {
        if (settled) return;
        settled = true;
        ws.terminate();
        reject(
          markRetryable(
            new ProvaelError(
              "policy/timeout",
              `connecting to ${shown} took over ${o.connectTimeoutMs} ms`,
              {
                hint: "check that the server runs and the address is right, or raise --connect-timeout",
              },
            ),
          ),
        );
      }, o.connectTimeoutMs);
      ws.once("open", () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(conn);
      });
      ws.once("unexpected-response", (_req, res) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        ws.terminate();
        const auth = res.statusCode === 401 || res.statusCode === 403;
        reject(
          new ProvaelError(
            auth ? "policy/load" : "policy/protocol",
            `${shown} refused the WebSocket upgrade with HTTP ${res.statusCode}`,
            {
              details: { status: res.statusCode },
              hint: auth
                ? "the server wants credentials: pass --api-key or set PROVAEL_API_KEY"
                : "check --policy-url: is this the policy server's address and protocol?",
            },
          ),
        );
      });
      ws.once("error", (e) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(lost(shown, e.message, e));
      });
    });
  }

  private push(f: Frame): void {
    if (this.credits !== null) {
      if (this.credits === 0) {
        this.protocolError(`${this.url} sent a frame no request asked for`);
        return;
      }
      this.credits -= 1;
    }
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      clearTimeout(w.timer);
      w.resolve(f);
      return;
    }
    const size = f.kind === "binary" ? f.data.length : f.text.length;
    if (this.frames.length >= MAX_QUEUED || this.queuedBytes + size > this.maxFrameBytes) {
      this.protocolError(
        `${this.url} sent more than ${MAX_QUEUED} frames (or ${this.maxFrameBytes} bytes) that no one awaited`,
      );
      return;
    }
    this.frames.push(f);
    this.queuedBytes += size;
  }

  /** Ends the connection for a frame the protocol does not allow; later calls get this error. */
  private protocolError(message: string): void {
    const e = new ProvaelError("policy/protocol", message, {
      hint: "the server broke request/reply pairing; its replies cannot be trusted to match requests",
    });
    this.protocolFailure ??= e;
    this.fail(e);
    this.frames.length = 0;
    this.queuedBytes = 0;
    this.ws.terminate();
  }

  private fail(e: ProvaelError): void {
    this.failure ??= e;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      clearTimeout(w.timer);
      w.reject(this.failure);
    }
  }

  get isOpen(): boolean {
    return this.failure === null && this.ws.readyState === WebSocket.OPEN;
  }

  /** The next frame, or a retryable `policy/timeout` after `timeoutMs`. */
  next(timeoutMs: number, what = "reply"): Promise<Frame> {
    const queued = this.frames.shift();
    if (queued) {
      this.queuedBytes -= queued.kind === "binary" ? queued.data.length : queued.text.length;
      return Promise.resolve(queued);
    }
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        reject(
          markRetryable(
            new ProvaelError(
              "policy/timeout",
              `${this.url} sent no ${what} within ${timeoutMs} ms`,
              {
                details: { timeoutMs },
                hint: "the server may be overloaded or stuck; raise --timeout for slow first inferences",
              },
            ),
          ),
        );
      }, timeoutMs);
      this.waiter = { resolve, reject, timer };
    });
  }

  /** The number of frames held that no one has read yet. */
  get queued(): number {
    return this.frames.length;
  }

  /** Sends a frame and, in strict mode, allows `replies` frames in answer to it. */
  send(data: Uint8Array, replies = 0): void {
    if (this.failure) throw this.failure;
    if (this.credits !== null) this.credits += replies;
    this.ws.send(data, { binary: true });
  }

  /** Resolves once closed, or after `ms` (the server's close may never come). */
  waitClosed(ms: number): Promise<void> {
    if (this.closeInfo) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.closedWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  close(): void {
    this.failure ??= new ProvaelError("policy/error", `connection to ${this.url} closed by us`);
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close(1000);
    else this.ws.terminate();
  }
}

function rawBytes(data: WebSocket.RawData): Uint8Array {
  if (Array.isArray(data)) return new Uint8Array(Buffer.concat(data));
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

function lost(url: string, why: string, cause?: unknown): ProvaelError {
  return markRetryable(
    new ProvaelError("policy/unavailable", `lost the connection to ${url}: ${why}`, {
      ...(cause === undefined ? {} : { cause }),
      hint: "is the policy server running? Check --policy-url",
    }),
  );
}

function frameTooBig(url: string, max: number): ProvaelError {
  return new ProvaelError("policy/protocol", `${url} sent a frame larger than ${max} bytes`, {
    details: { maxFrameBytes: max },
    hint: "raise --max-frame if the server's replies are legitimately this large",
  });
}
