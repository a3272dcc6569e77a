/**
 * `provael bridge`: a vla-evaluation-harness model server (PROTOCOLS.md §4) that a benchmark
 * connects to as its policy. Each arm has its own path, `ws://HOST:PORT/arms/<arm>`. An
 * EPISODE_START opens a cell (task, `episode_idx` as the seed, the arm from the path, the repeat
 * counted from what already finished), every OBSERVATION is perturbed by the arm, forwarded to
 * the user's policy through our clients, and the arm's version of the action is answered; every
 * step is judged from the observation as the benchmark profile says. EPISODE_END latches success
 * and journals the episode, the same record and the same journal the runner writes.
 *
 * This module listens (HTTP control routes, websocket upgrades per arm); what the connections
 * share is `session.ts`, one connection's messages `connection.ts`, and the episodes themselves
 * are the episode kernel's (src/kernel).
 *
 * @example
 *   const bridge = await startBridge({ policy: "vla-eval", policyOptions: { url: "ws://127.0.0.1:8000" },
 *     arms: ["none", "roleplay"], profile: loadProfile("libero"), out: "runs/libero", host: "127.0.0.1", port: 9000 });
 *   bridge.armUrls.roleplay; // ws://127.0.0.1:9000/arms/roleplay
 *   await bridge.close(); // journal complete, report written
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import { attacks } from "../attacks/index.js";
import { resolveParams } from "../attacks/params.js";
import { systemClock } from "../core/clock.js";
import { ProvaelError } from "../core/errors.js";
import { redactUrl } from "../core/redact.js";
import type { Policy, PolicyCapabilities } from "../core/types.js";
import { policies } from "../policies/index.js";
import {
  hostForUrl,
  listen,
  newHttpServer,
  sendJson,
  shutdown,
} from "../policies/served/server/http.js";
import {
  DEFAULT_DEADLINE_MS,
  defaultBudget,
  IntakeBudget,
  watchWebSocket,
} from "../policies/served/server/intake.js";
import { Connection } from "./connection.js";
import type { BridgeOptions, RunningBridge } from "./options.js";
import { ARM_PATH } from "./options.js";
import { loadProfile } from "./profile.js";
import { refusalOf } from "./refusal.js";
import { type BridgeRunResult, claimBridgeDir, journalledProfile } from "./rundir.js";
import { Bridge } from "./session.js";
import { upstreamControl } from "./upstream.js";

export {
  ARM_PATH,
  type BridgeEvent,
  type BridgeOptions,
  type RunningBridge,
  routeName,
} from "./options.js";

/**
 * A pool of upstreams must serve one policy: every server's weights digest and reported model
 * equal the first's, checked before the bridge listens.
 */
async function checkSameUpstreams(
  policy: Policy,
  o: BridgeOptions,
  digest: string | null,
): Promise<void> {
  const urls = o.policyUrls ?? [];
  let first: string | null = null;
  for (const url of urls) {
    const inst = await policy.load({ ...o.policyOptions, url });
    try {
      const m = inst.servedModel;
      const model = JSON.stringify([inst.digest ?? null, m?.protocol, m?.name, m?.digest]);
      first ??= model;
      if (model !== first || (inst.digest ?? null) !== digest) {
        throw new ProvaelError(
          "config/invalid",
          `the upstream servers serve different models: ${redactUrl(url)} is not the model of ${redactUrl(urls[0] as string)}`,
          { hint: "every --policy-url must serve the same policy and weights" },
        );
      }
    } finally {
      await inst.close();
    }
  }
}

/** Starts the bridge: probes the upstream, opens the journal, listens. */
export async function startBridge(o: BridgeOptions): Promise<RunningBridge> {
  const clock = o.clock ?? systemClock;
  if (o.arms.length === 0) throw new ProvaelError("config/invalid", "the attack list is empty");
  for (const a of o.arms) resolveParams(attacks.get(a), o.attackParams ?? {});
  const policy = policies.get(o.policy);
  // One instance up front: the upstream's capabilities, digest and HELLO, and a clear error now
  // rather than at the first episode when it is not reachable.
  const probe = await policy.load(o.policyOptions);
  let capabilities: PolicyCapabilities;
  let digest: string | null;
  let handshake: Readonly<Record<string, unknown>> | null;
  try {
    capabilities = { ...probe.capabilities, queryable: typeof probe.query === "function" };
    digest = probe.digest ?? null;
    handshake = probe.handshake ?? null;
  } finally {
    await probe.close();
  }
  await checkSameUpstreams(policy, o, digest);
  // One writer per directory from now on; the journal opens once the profile is known.
  const claimed = claimBridgeDir(o.out);
  const b = new Bridge(o, capabilities, handshake, clock, claimed, digest);
  try {
    const journalled = o.profile === "auto" && o.resume ? journalledProfile(claimed, o.out) : null;
    const chosen = o.profile !== "auto" ? o.profile : journalled ? loadProfile(journalled) : null;
    if (chosen) b.bind(chosen);
  } catch (e) {
    // The directory is let go of: a library caller may open it again in this process.
    b.abandon();
    throw e;
  }

  const maxFrame = o.maxFrameBytes ?? 256 * 1024 * 1024;
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: maxFrame,
  });
  const intake = new IntakeBudget({
    budgetBytes: o.maxBufferedBytes ?? defaultBudget(maxFrame),
    deadlineMs: o.frameDeadlineMs ?? DEFAULT_DEADLINE_MS,
  });
  const control = upstreamControl(o.policy, o.policyOptions);
  const http = newHttpServer((req, res) => {
    const [path, query] = (req.url ?? "").split(/(?=\?)/, 2) as [string, string | undefined];
    // Ready only once the upstream answers (a launcher polls /health before the benchmark).
    if (req.method === "GET" && path === "/health") {
      void control
        .health()
        .then((h) =>
          h.ok
            ? sendJson(res, 200, '{"status": "ok"}')
            : sendJson(res, 503, JSON.stringify({ status: "waiting", detail: h.detail })),
        );
      return;
    }
    // A vla-eval upstream's control plane answers for itself (`?max_batch_size=8` included).
    if (req.method === "GET" && path === "/config") {
      void control
        .config(query ?? "")
        .then((c) =>
          c
            ? sendJson(res, c.status, c.body)
            : sendJson(res, 200, '{"max_batch_size": 1, "max_wait_time": 0.0}'),
        );
      return;
    }
    if (req.method === "GET" && (path === "/arms" || path === "/"))
      return sendJson(res, 200, JSON.stringify({ arms: urls, not_applicable: b.notApplicable }));
    res.writeHead(426, { "content-type": "text/plain", upgrade: "websocket" });
    res.end("WebSocket upgrade expected at /arms/<arm>.\n");
  });
  http.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = decodeURIComponent(req.url?.split("?")[0] ?? "");
    const name = path.startsWith(ARM_PATH) ? path.slice(ARM_PATH.length).replace(/\/+$/, "") : "";
    const route = b.routes.get(name);
    if (!route || b.stopping) {
      // An address that names no arm is a refusal too (a typo in --server-url): recorded and
      // printed with the addresses there are.
      const body = b.stopping
        ? "the bridge is stopping\n"
        : `${b.refuse(
            refusalOf(
              "unknown_arm",
              new ProvaelError("config/invalid", `no arm at '${path}'`, {
                hint: `pass one of ${Object.values(urls).join(", ")} as --server-url`,
              }),
              { connection: ++b.opened, route: null },
            ),
          )}\n`;
      socket.end(
        `HTTP/1.1 ${b.stopping ? 503 : 404} ${b.stopping ? "Service Unavailable" : "Not Found"}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      watchWebSocket(intake, ws, socket);
      const conn = new Connection(b, ws, route.arm, route.defenses, ++b.opened, name);
      b.connections.add(conn);
      ws.on("message", (data: Buffer, isBinary: boolean) => conn.onMessage(data, isBinary));
      const gone = () => {
        void conn.serial(() => conn.closed()).finally(() => b.connections.delete(conn));
      };
      ws.once("close", gone);
      ws.on("error", () => ws.terminate());
    });
  });
  let addr: Awaited<ReturnType<typeof listen>>;
  try {
    addr = await listen(http, o.host, o.port);
  } catch (e) {
    b.abandon();
    throw e;
  }
  const base = `ws://${hostForUrl(o.host)}:${addr.port}`;
  const urls: Record<string, string> = Object.fromEntries(
    [...b.routes.keys()].map((r) => [
      r,
      `${base}${ARM_PATH}${encodeURIComponent(r).replace(/%2B/g, "+")}`,
    ]),
  );
  let closing: Promise<BridgeRunResult> | null = null;
  return {
    host: o.host,
    port: addr.port,
    url: base,
    armUrls: urls,
    notApplicable: b.notApplicable,
    finished: () => b.journal?.count ?? 0,
    dropped: () => b.dropped,
    close() {
      closing ??= (async () => {
        b.stopping = true;
        const conns = [...b.connections];
        for (const c of wss.clients) c.close(1001, "bridge stopping");
        // Each connection records its open episode once its current message is done.
        await Promise.all(conns.map((c) => c.serial(() => c.closed())));
        for (const c of wss.clients) c.terminate();
        wss.close();
        await shutdown(http);
        await b.pool.close();
        if (!b.journal) {
          b.abandon();
          throw new ProvaelError(
            "run/incomplete",
            "no benchmark's HELLO was accepted, so there is nothing to report",
            {
              hint: `point the benchmark at one of ${Object.values(urls).join(", ")}; its HELLO chooses the profile (--profile auto), or name one with --profile`,
            },
          );
        }
        return b.journal.finish(o.commandLine ?? []);
      })();
      return closing;
    },
  };
}
