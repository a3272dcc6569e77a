/**
 * An OpenVLA `deploy.py`-conformant REST server (PROTOCOLS.md §3) in front of an in-process
 * policy: `POST /act` with a json-numpy body, the bare JSON string `"error"` with HTTP 200 on any
 * failure, FastAPI-style 422 for a body that is not JSON, and the double-encoded `{"encoded": …}`
 * form.
 *
 * HTTP has no connections to hang episodes on, so sessions are keyed by the `provael/episode` id
 * our client sends; a client without it shares one session that resets when the instruction
 * changes.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ProvaelError } from "../../../core/errors.js";
import { decodeJsonNumpy, encodeJsonNumpy } from "../codec/json-numpy.js";
import { float64Array, toFloat64 } from "../codec/ndarray.js";
import { isWireMap, type WireMap, type WireValue } from "../codec/tree.js";
import { EPISODE_KEY, encodeActions } from "../layouts.js";
import type { PolicyHost, Session } from "./host.js";
import {
  hostForUrl,
  listen,
  newHttpServer,
  type RunningServer,
  sendJson,
  shutdown,
} from "./http.js";

export async function startOpenvlaServer(
  host: PolicyHost,
  at: { host: string; port: number },
): Promise<RunningServer> {
  const anonymous = host.session();

  const sessionFor = (body: WireMap): Session => {
    const ep = body[EPISODE_KEY];
    const id = isWireMap(ep) && typeof ep.id === "string" ? ep.id : null;
    if (id === null) {
      const instruction = typeof body.instruction === "string" ? body.instruction : null;
      if (anonymous.lastInstruction !== null && instruction !== anonymous.lastInstruction)
        anonymous.restart();
      return anonymous;
    }
    return host.episodeSession(id);
  };

  // Bodies are counted against the server's intake budget as their bytes arrive (intake.ts):
  // nothing is reserved for a body before it comes, so a peer that trickles a chunked upload
  // holds only what it sent, until the deadline cuts it; over the budget the largest unfinished
  // body is cut; a declared length that cannot fit now is told to come back before it is read.
  const act = async (req: IncomingMessage, res: ServerResponse) => {
    const declared = Number(req.headers["content-length"] ?? Number.NaN);
    if (declared > host.maxFrameBytes) {
      req.resume();
      return sendJson(res, 413, '{"detail": "request body too large"}');
    }
    if (declared > host.intake.limits.budgetBytes - host.intake.bytes) return busy(req, res);
    const got = await receive(req);
    if (!("body" in got)) {
      if (got.status === 503) return busy(req, res);
      hangUp(req, res);
      return sendJson(res, got.status, JSON.stringify({ detail: got.detail }));
    }
    try {
      return await answer(got.body, res);
    } finally {
      got.release();
    }
  };
  /** The rest of a refused body is not waited for: the connection ends with the answer. */
  const hangUp = (req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    res.setHeader("connection", "close");
    res.once("finish", () => req.socket.destroy());
  };
  const busy = (req: IncomingMessage, res: ServerResponse) => {
    hangUp(req, res);
    res.setHeader("retry-after", "1");
    return sendJson(res, 503, '{"detail": "server busy: too many large requests at once"}');
  };
  /** A request's body, counted as it arrives; or the status it is refused with. */
  const receive = (
    req: IncomingMessage,
  ): Promise<{ body: Buffer; release: () => void } | { status: number; detail: string }> =>
    new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      const refuse = (status: number, detail: string) => {
        if (done) return;
        done = true;
        flow.close();
        chunks.length = 0;
        req.removeAllListeners("data");
        req.resume();
        resolve({ status, detail });
      };
      const flow = host.intake.open((why) =>
        why === "budget"
          ? refuse(503, "server busy: too many large requests at once")
          : refuse(408, `request body not received within ${host.intake.limits.deadlineMs} ms`),
      );
      req.on("data", (c: Buffer) => {
        if (done) return;
        size += c.length;
        if (size > host.maxFrameBytes) return refuse(413, "request body too large");
        chunks.push(c);
        flow.received(c.length);
      });
      req.on("end", () => {
        if (done) return;
        done = true;
        flow.finished(size);
        const release = flow.hold(size);
        flow.close();
        resolve({ body: Buffer.concat(chunks), release });
      });
      req.on("error", () => refuse(400, "the request was not received"));
    });
  const answer = async (bytes: Buffer, res: ServerResponse) => {
    const text = bytes.toString("utf8");
    let body: WireValue;
    try {
      body = decodeJsonNumpy(text, host.decodeLimits);
    } catch (e) {
      // A body over a decode bound is valid JSON we will not build: too large, not malformed.
      if (e instanceof ProvaelError && typeof e.details.bound === "string")
        return sendJson(
          res,
          413,
          JSON.stringify({ detail: `request body too large to decode: ${e.message}` }),
        );
      return sendJson(
        res,
        422,
        JSON.stringify({
          detail: [{ type: "json_invalid", loc: ["body"], msg: "JSON decode error" }],
        }),
      );
    }
    // deploy.py's alternative for clients without json-numpy: the body double-encoded in a string.
    const encoded =
      isWireMap(body) && Object.keys(body).length === 1 && typeof body.encoded === "string";
    try {
      const payload = encoded
        ? decodeJsonNumpy((body as WireMap).encoded as string, host.decodeLimits)
        : body;
      if (!isWireMap(payload)) throw new Error("the body is not a JSON object");
      const session = sessionFor(payload);
      const action = await session.serial(() => session.act(payload));
      const reply = float64Array(toFloat64(encodeActions(host.layout, [action])), [
        host.layout.actions.dim,
      ]);
      const json = encodeJsonNumpy(reply);
      return sendJson(res, 200, encoded ? JSON.stringify(json) : json);
    } catch (e) {
      // deploy.py logs the exception and answers the bare string "error" with HTTP 200.
      process.stderr.write(
        `provael serve-policy: /act failed: ${e instanceof Error ? e.message : String(e)}\n`,
      );
      return sendJson(res, 200, '"error"');
    }
  };

  const http = newHttpServer((req, res) => {
    const path = req.url?.split("?")[0];
    if (path === "/act") {
      if (req.method === "POST") {
        void act(req, res);
        return;
      }
      return sendJson(res, 405, '{"detail":"Method Not Allowed"}');
    }
    if (req.method === "GET" && path === "/provael/info")
      return sendJson(res, 200, JSON.stringify(host.describe("openvla")));
    sendJson(res, 404, '{"detail":"Not Found"}');
  });
  const addr = await listen(http, at.host, at.port);
  return {
    protocol: "openvla",
    host: at.host,
    port: addr.port,
    url: `http://${hostForUrl(at.host)}:${addr.port}`,
    async close() {
      anonymous.end();
      await shutdown(http);
    },
  };
}
