/**
 * What a server holds of its requests, across every connection at once. `--max-frame` bounds one
 * frame; without a bound across connections, 24 peers each sending a 60 MB frame make the
 * server hold 1.4 GB, and a peer that stops half-way through a frame holds its part for as long
 * as it likes. An `IntakeBudget` counts every request byte received and not yet answered: bytes
 * of frames (or HTTP bodies) still arriving, and whole ones waiting for the policy. Over the
 * budget, the connection with the most bytes of an unfinished frame is cut (the flood, not the
 * small request that arrived last); a frame or body not finished within the deadline from its
 * first byte is cut too. Used by the `serve-policy` servers and the bridge.
 *
 * Within the budget, a flood still costs time: Node accepts at most one new connection per
 * event-loop turn, and a turn that reads every flooding connection's whole socket buffer (up to
 * 2 MiB each) lasts hundreds of milliseconds, so a good client queued behind 24 flooding
 * connections waited over 5 s for its upgrade. Each connection therefore reads at most
 * `TURN_BYTES` per turn: past it, its socket is paused until the turn's check phase. Turns stay
 * short, new connections are accepted promptly, and a request smaller than the share is never
 * slowed.
 */
import type { Duplex } from "node:stream";
import type { WebSocket } from "ws";

export interface IntakeLimits {
  /** Request bytes held at once across all connections. */
  budgetBytes: number;
  /** How long a frame or body may take to arrive, from its first byte, in milliseconds. */
  deadlineMs: number;
}

/** The default deadline: a 64 MiB frame arrives in well under a second on loopback. */
export const DEFAULT_DEADLINE_MS = 30_000;

/**
 * The default budget for a server whose frames may be `maxFrameBytes`: three whole frames, what
 * one client that pipelines may hold (a frame being answered, one waiting, one arriving) before
 * its connection is paused (server/http.ts `Backlog`), so a single well-behaved client is never cut.
 */
export const defaultBudget = (maxFrameBytes: number): number => 3 * maxFrameBytes;

/**
 * Bytes left over after a frame completes that are taken for framing (headers, control frames)
 * rather than the start of another frame: less than this is never cut for being late.
 */
const SLACK_BYTES = 1024;

/**
 * What one connection may read in one event-loop turn before it yields to the others (a turn's
 * cost grows with the bytes read in it). One frame of 256 KiB needs no second turn; a 60 MB frame
 * needs about 230, each a pause and a resume of its socket.
 */
export const TURN_BYTES = 256 * 1024;

/** How a connection's reading is paused and resumed when it has had its share of a turn. */
export interface Yielding {
  pause(): void;
  resume(): void;
}

/** Why an inflow was cut. */
export type CutReason = "budget" | "deadline";

export class IntakeBudget {
  private readonly flows = new Set<Inflow>();
  private total = 0;
  /** Connections cut so far, by reason (for logs and tests). */
  readonly cuts: Record<CutReason, number> = { budget: 0, deadline: 0 };
  /** Times a connection was paused for having read its share of a turn (for tests). */
  yields = 0;
  /** Connections paused in this turn, resumed at its check phase. */
  private readonly yielded = new Set<Inflow>();
  /** Connections that read in this turn (their count restarts at the turn's end). */
  private readonly reading = new Set<Inflow>();
  private turnEnd: NodeJS.Immediate | null = null;

  constructor(
    readonly limits: IntakeLimits,
    /** Bytes a connection reads per turn before it yields (`TURN_BYTES`). */
    readonly turnBytes: number = TURN_BYTES,
  ) {}

  /** Request bytes held now. */
  get bytes(): number {
    return this.total;
  }

  /**
   * A new stream of request bytes (one connection); `cut` ends it when it must go. With
   * `yielding`, the connection is paused for the rest of a turn once it has read its share.
   */
  open(cut: (why: CutReason) => void, yielding?: Yielding): Inflow {
    const flow = new Inflow(this, cut, yielding ?? null);
    this.flows.add(flow);
    return flow;
  }

  /** @internal `flow` read in this turn: the turn's end restarts every count. */
  reads(flow: Inflow): void {
    this.reading.add(flow);
    this.turnEnd ??= setImmediate(() => this.endTurn());
  }

  /** @internal `flow` has had its share of this turn. */
  yield(flow: Inflow): void {
    this.yields += 1;
    this.yielded.add(flow);
  }

  private endTurn(): void {
    this.turnEnd = null;
    for (const f of this.reading) f.turnRead = 0;
    this.reading.clear();
    const paused = [...this.yielded];
    this.yielded.clear();
    for (const f of paused) f.resumeTurn();
  }

  /** @internal */
  change(by: number): void {
    this.total += by;
  }

  /** @internal */
  forget(flow: Inflow): void {
    this.flows.delete(flow);
    this.reading.delete(flow);
    this.yielded.delete(flow);
  }

  /** @internal Cuts the largest unfinished frames until the total fits. */
  enforce(): void {
    while (this.total > this.limits.budgetBytes) {
      let largest: Inflow | null = null;
      for (const f of this.flows) if (!largest || f.pending > largest.pending) largest = f;
      if (!largest || largest.pending === 0) return;
      this.cuts.budget += 1;
      largest.cut("budget");
    }
  }
}

/** One connection's request bytes: those of its unfinished frame, and those it holds. */
export class Inflow {
  pending = 0;
  /** Bytes read in this event-loop turn. */
  turnRead = 0;
  private held = 0;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly budget: IntakeBudget,
    private readonly onCut: (why: CutReason) => void,
    private readonly yielding: Yielding | null,
  ) {}

  /** Bytes of a frame or body arrived. */
  received(bytes: number): void {
    if (this.closed) return;
    if (this.pending === 0) this.startClock();
    this.pending += bytes;
    this.budget.change(bytes);
    this.budget.enforce();
    if (this.closed || !this.yielding) return;
    const before = this.turnRead;
    this.turnRead += bytes;
    this.budget.reads(this);
    if (before <= this.budget.turnBytes && this.turnRead > this.budget.turnBytes) {
      this.budget.yield(this);
      this.yielding.pause();
    }
  }

  /** @internal The turn this connection yielded in is over. */
  resumeTurn(): void {
    if (!this.closed) this.yielding?.resume();
  }

  /**
   * A frame or body of `bytes` is complete: its bytes leave the unfinished count. What is left is
   * the start of the next frame (its clock starts now), or framing overhead.
   */
  finished(bytes: number): void {
    if (this.closed) return;
    const done = Math.min(bytes, this.pending);
    this.pending -= done;
    this.budget.change(-done);
    if (this.pending < SLACK_BYTES) {
      this.budget.change(-this.pending);
      this.pending = 0;
      this.stopClock();
    } else this.startClock();
  }

  /** Counts `bytes` of a whole request until the returned function is called (once). */
  hold(bytes: number): () => void {
    this.held += bytes;
    this.budget.change(bytes);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held -= bytes;
      this.budget.change(-bytes);
    };
  }

  /** Cuts this inflow: its unfinished bytes are dropped and it is told why. */
  cut(why: CutReason): void {
    if (this.closed) return;
    this.close();
    this.onCut(why);
  }

  /** The connection is gone: its unfinished bytes no longer count (held ones until released). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stopClock();
    this.budget.change(-this.pending);
    this.pending = 0;
    this.budget.forget(this);
  }

  private startClock(): void {
    this.stopClock();
    this.timer = setTimeout(() => {
      this.budget.cuts.deadline += 1;
      this.cut("deadline");
    }, this.budget.limits.deadlineMs);
    this.timer.unref();
  }

  private stopClock(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

/** Close codes and reasons a cut websocket peer is sent (RFC 6455 §7.4.1). */
const CUT_CLOSE: Record<CutReason, [number, string]> = {
  budget: [1013, "server busy: too many request bytes in flight"],
  deadline: [1008, "frame not finished within the deadline"],
};

/**
 * Counts a websocket connection's request bytes against `budget`. Call it in `handleUpgrade`'s
 * callback with the socket that was upgraded: the byte counter is put ahead of `ws`'s own reader,
 * so each chunk is counted before the frame it completes is delivered.
 */
export function watchWebSocket(budget: IntakeBudget, ws: WebSocket, socket: Duplex): Inflow {
  const flow = budget.open(
    (why) => {
      const [code, reason] = CUT_CLOSE[why];
      try {
        ws.close(code, reason);
      } catch {
        // Already closing.
      }
      // The close frame gets its turn to leave; the socket (and the partial frame) go now after.
      setImmediate(() => ws.terminate());
    },
    {
      // The socket itself, not `ws.pause()`: a connection the server paused for its backlog
      // (http.ts `Backlog`) stays paused when its turn ends.
      pause: () => socket.pause(),
      resume: () => {
        if (!ws.isPaused) socket.resume();
      },
    },
  );
  socket.prependListener("data", (chunk: Buffer) => flow.received(chunk.length));
  ws.on("message", (data: Buffer | ArrayBuffer | Buffer[]) => flow.finished(messageBytes(data)));
  // Control frames and their headers: at most 125 bytes of payload and 14 of header each.
  const control = (data: Buffer) => flow.finished(data.length + 14);
  ws.on("ping", control);
  ws.on("pong", control);
  ws.once("close", () => flow.close());
  return flow;
}

/** A message's bytes on the wire: its payload and the largest header a client frame has. */
function messageBytes(data: Buffer | ArrayBuffer | Buffer[]): number {
  const n = Array.isArray(data)
    ? data.reduce((s, b) => s + b.length, 0)
    : data instanceof ArrayBuffer
      ? data.byteLength
      : data.length;
  return n + 14;
}
