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
  BodyPool,
  hostForUrl,
  listen,
  newHttpServer,
  type RunningServer,
  readBody,
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

  // Bodies held at once across every connection: two full frames, so one client's burst of
  // large bodies cannot take the heap; others are told to come back (503, Retry-After).
  const pool = new BodyPool(2 * host.maxFrameBytes);
  const act = async (req: IncomingMessage, res: ServerResponse) => {
    const declared = Number(req.headers["content-length"] ?? Number.NaN);
    if (declared > host.maxFrameBytes) {
      req.resume();
      return sendJson(res, 413, '{"detail": "request body too large"}');
    }
    const release = pool.reserve(Number.isFinite(declared) ? declared : host.maxFrameBytes);
    if (!release) {
      req.resume();
      res.setHeader("retry-after", "1");
      return sendJson(res, 503, '{"detail": "server busy: too many large requests at once"}');
    }
    try {
      return await answer(req, res);
    } finally {
      release();
    }
  };
  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    let text: string;
    try {
      text = (await readBody(req, host.maxFrameBytes)).toString("utf8");
    } catch {
      return sendJson(res, 413, '{"detail": "request body too large"}');
    }
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
