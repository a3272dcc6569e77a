/**
 * The serve-policy servers hold a bounded number of request bytes across all their connections,
 * and cut a frame or body that stops arriving: peers that send part of a large frame and stall
 * (more of them than the budget holds) are cut, by the budget or by the deadline, while a good
 * request is answered; two trickling chunked uploads no longer make OpenVLA's `/act` answer 503.
 * Before, each connection could hold up to --max-frame for as long as it liked.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  type RunningServer,
  type ServeProtocol,
  startPolicyServer,
} from "../../src/policies/served/server/index.js";
import { stubPolicy } from "../../src/policies/stub.js";
import { goodRequest } from "../support/served-client.js";
import { stalledFrame, stalledUpload } from "../support/stalled-peers.js";

const MiB = 1024 * 1024;

const servers: RunningServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

/** A server with a 4 MiB frame, an 8 MiB budget and a deadline set short by option. */
async function serve(protocol: ServeProtocol, frameDeadlineMs: number): Promise<RunningServer> {
  const s = await startPolicyServer({
    policy: stubPolicy,
    protocol,
    host: "127.0.0.1",
    port: 0,
    maxFrameBytes: 4 * MiB,
    maxBufferedBytes: 8 * MiB,
    frameDeadlineMs,
  });
  servers.push(s);
  return s;
}

describe("server-wide intake budget and frame deadline", () => {
  it.each(["openpi", "vla-eval"] as const)(
    "%s: 6 stalled 3 MiB frames (18 MiB > the 8 MiB budget) are cut; a good request is answered",
    async (protocol) => {
      const server = await serve(protocol, 1500);
      const stalled = await Promise.all(
        Array.from({ length: 6 }, () => stalledFrame(server.port, 4 * MiB - 1024, 3 * MiB)),
      );
      // The budget cuts some at once; a good request is answered while the rest wait.
      expect(await goodRequest(protocol, server.url)).toBe(7);
      // The deadline cuts the rest: every stalled connection ends, none is left holding bytes.
      await Promise.all(stalled.map((p) => p.closed));
      const codes = stalled.map((p) => closeCode(p.received()));
      expect(codes.every((c) => c === 1008 || c === 1013 || c === null)).toBe(true);
      expect(codes).toContain(1008);
      expect(await goodRequest(protocol, server.url)).toBe(7);
    },
    60_000,
  );

  it("openvla: two trickling chunked uploads hold no pool; /act answers; they get 408", async () => {
    const server = await serve("openvla", 1500);
    const trickles = await Promise.all([
      stalledUpload(server.port, 10),
      stalledUpload(server.port, 10),
    ]);
    expect(await goodRequest("openvla", server.url)).toBe(7);
    await Promise.all(trickles.map((t) => t.closed));
    for (const t of trickles) expect(t.received()).toMatch(/^HTTP\/1\.1 408/);
    expect(await goodRequest("openvla", server.url)).toBe(7);
  }, 60_000);

  it("openvla: stalled large bodies past the budget are cut with 503, a good request answered", async () => {
    const server = await serve("openvla", 1500);
    const big = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const t = await stalledUpload(server.port, 3 * MiB);
        return t;
      }),
    );
    expect(await goodRequest("openvla", server.url)).toBe(7);
    await Promise.all(big.map((t) => t.closed));
    const statuses = big.map((t) => t.received().slice(9, 12));
    expect(statuses).toContain("503");
    expect(statuses.every((s) => s === "503" || s === "408")).toBe(true);
  }, 60_000);
});

/** The close code of the first close frame a server sent on a raw websocket, or null. */
function closeCode(received: string): number | null {
  const body = received.slice(received.indexOf("\r\n\r\n") + 4);
  const b = Buffer.from(body, "latin1");
  for (let i = 0; i + 3 < b.length; ) {
    const op = (b[i] as number) & 0x0f;
    let len = (b[i + 1] as number) & 0x7f;
    let at = i + 2;
    if (len === 126) {
      len = b.readUInt16BE(at);
      at += 2;
    } else if (len === 127) {
      len = Number(b.readBigUInt64BE(at));
      at += 8;
    }
    if (op === 0x8) return len >= 2 ? b.readUInt16BE(at) : null;
    i = at + len;
  }
  return null;
}
