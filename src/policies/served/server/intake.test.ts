/**
 * A connection reads at most its share of an event-loop turn. Node accepts one new connection per
 * turn; before the share, 24 peers each sending a 60 MB frame made every turn read up to 2 MiB
 * from each of them, turns lasted 0.4–0.9 s, and a good client queued behind them waited over
 * 5 s for its upgrade (bench/intake-rss.mjs lost one good request in 19 on openpi and vla-eval).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { IntakeBudget, watchWebSocket } from "./intake.js";

const KiB = 1024;
const MiB = 1024 * KiB;
const turn = () => new Promise<void>((r) => setImmediate(r));

describe("IntakeBudget: a connection's share of a turn", () => {
  it("pauses a connection once it has read its share, and resumes it when the turn ends", async () => {
    const budget = new IntakeBudget({ budgetBytes: 10 * MiB, deadlineMs: 60_000 }, 1000);
    const log: string[] = [];
    const flow = budget.open(() => log.push("cut"), {
      pause: () => log.push("pause"),
      resume: () => log.push("resume"),
    });
    flow.received(600);
    expect(log).toEqual([]);
    flow.received(600);
    // A chunk already read while pausing does not pause it twice.
    flow.received(600);
    expect(log).toEqual(["pause"]);
    await turn();
    expect(log).toEqual(["pause", "resume"]);
    // A new turn, a new share.
    flow.received(900);
    expect(log).toEqual(["pause", "resume"]);
    await turn();
    flow.finished(2700 + 14);
    expect(budget.bytes).toBe(0);
    expect(budget.yields).toBe(1);
    flow.close();
  });

  it("a small request never yields; a cut or closed connection is not resumed", async () => {
    const budget = new IntakeBudget({ budgetBytes: 10 * MiB, deadlineMs: 60_000 }, 1000);
    const log: string[] = [];
    const small = budget.open(() => {}, {
      pause: () => log.push("small paused"),
      resume: () => log.push("small resumed"),
    });
    small.received(999);
    const big = budget.open(() => {}, {
      pause: () => log.push("big paused"),
      resume: () => log.push("big resumed"),
    });
    big.received(5000);
    big.close();
    await turn();
    expect(log).toEqual(["big paused"]);
    small.close();
  });
});

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

describe("watchWebSocket: reads per turn under a flood", () => {
  it("no connection reads more than its share and two socket reads in a turn; every frame arrives whole", async () => {
    const share = 64 * KiB;
    const budget = new IntakeBudget({ budgetBytes: 64 * MiB, deadlineMs: 60_000 }, share);
    const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
    const http = createServer();
    servers.push(http);
    let mostInOneTurn = 0;
    const received: number[] = [];
    http.on("upgrade", (req, socket, head) => {
      wss.handleUpgrade(req, socket, head, (ws) => {
        watchWebSocket(budget, ws, socket);
        // What this connection reads per turn, counted beside the budget's own count.
        let read = 0;
        let counting = false;
        socket.on("data", (chunk: Buffer) => {
          read += chunk.length;
          mostInOneTurn = Math.max(mostInOneTurn, read);
          if (!counting) {
            counting = true;
            setImmediate(() => {
              read = 0;
              counting = false;
            });
          }
        });
        ws.on("message", (data: Buffer) => {
          received.push(data.length);
          ws.send("ok");
        });
      });
    });
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    const { port } = http.address() as AddressInfo;
    // Four peers, each a 4 MiB frame written at once (a flood, scaled down).
    const frame = Buffer.alloc(4 * MiB, 0x61);
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        const ws = new WebSocket(`ws://127.0.0.1:${port}`, { perMessageDeflate: false });
        await new Promise((r, j) => {
          ws.once("open", r);
          ws.once("error", j);
        });
        const answered = new Promise((r) => ws.once("message", r));
        ws.send(frame);
        await answered;
        ws.close();
      }),
    );
    expect(received).toEqual([4 * MiB, 4 * MiB, 4 * MiB, 4 * MiB]);
    // A socket read is at most 64 KiB: the share, the read that crossed it, and the one the
    // paused stream had already taken from the socket (delivered as the turn ends).
    expect(mostInOneTurn).toBeLessThanOrEqual(share + 2 * 64 * KiB);
    expect(budget.yields).toBeGreaterThan(0);
  }, 30_000);
});
