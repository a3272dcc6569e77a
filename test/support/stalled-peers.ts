/**
 * Peers that start a request and never finish it, written on raw sockets (a websocket client
 * library always sends whole frames): a websocket frame whose header promises more bytes than
 * follow, and an HTTP chunked upload that sends one chunk and waits.
 */
import { connect, type Socket } from "node:net";

export interface StalledPeer {
  socket: Socket;
  /** Resolves when the server closes the connection. */
  closed: Promise<void>;
  /** What the server wrote back. */
  received(): string;
}

function open(port: number, request: string, expect: RegExp | null): Promise<StalledPeer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let got = "";
    let opened = false;
    const closed = new Promise<void>((r) => socket.once("close", () => r()));
    socket.on("error", () => {});
    socket.on("data", (d: Buffer) => {
      got += d.toString("latin1");
      if (!opened && expect?.test(got)) {
        opened = true;
        resolve({ socket, closed, received: () => got });
      }
    });
    socket.once("connect", () => {
      socket.write(request);
      if (expect === null) {
        opened = true;
        resolve({ socket, closed, received: () => got });
      }
    });
    socket.once("close", () => {
      if (!opened) reject(new Error(`closed before the request was accepted: ${got}`));
    });
  });
}

/**
 * A websocket connection that sends the header of a binary frame of `total` bytes and the first
 * `sent` of them (in 1 MiB writes), then nothing more.
 */
export async function stalledFrame(
  port: number,
  total: number,
  sent: number,
  path = "/",
): Promise<StalledPeer> {
  const peer = await open(
    port,
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    /^HTTP\/1\.1 101/,
  );
  const header = Buffer.alloc(14);
  header[0] = 0x82; // FIN, binary
  header[1] = 0x80 | 127; // masked, 64-bit length
  header.writeBigUInt64BE(BigInt(total), 2);
  // Mask key 0: the payload goes as written.
  peer.socket.write(header);
  const chunk = Buffer.alloc(1 << 20, 0x61);
  for (let left = sent; left > 0; left -= chunk.length)
    if (!peer.socket.destroyed)
      peer.socket.write(left >= chunk.length ? chunk : chunk.subarray(0, left));
  return peer;
}

/** A `POST path` with a chunked body: one chunk of `first` bytes, then nothing more. */
export async function stalledUpload(
  port: number,
  first: number,
  path = "/act",
): Promise<StalledPeer> {
  const peer = await open(
    port,
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`,
    null,
  );
  peer.socket.write(`${first.toString(16)}\r\n${"[".repeat(first)}\r\n`);
  return peer;
}
