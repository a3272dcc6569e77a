/**
 * `provael view`'s server: node:http on 127.0.0.1 by default, read-only (GET and HEAD only), and
 * serving only what the viewer builds from the run directories it was given: JSON answers, the
 * app page, frame PNGs found through `frameFile` (inside a run's frames folder or the replay
 * cache, never a link), a run's own showcase clip, and clips rendered into the cache. Every path segment is checked against
 * the shape it must have (run id, cell id, frame name) before it touches the file system, and
 * requests naming another host are refused (DNS rebinding).
 */
import { createReadStream, existsSync, lstatSync, mkdirSync, statSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { isProvaelError, ProvaelError } from "../core/errors.js";
import { TOOL_VERSION } from "../core/package-root.js";
import { assertInside, RUN_FILES } from "../rundir/files.js";
import type { FinishedRun } from "../rundir/read.js";
import type { LoadedCalibration } from "../runner/calibration.js";
import {
  checkCell,
  comparePayload,
  episodePayload,
  findPair,
  readable,
  reportOf,
  runPayload,
  runsPayload,
  showcaseClipOf,
} from "./api.js";
import { Catalog } from "./catalog.js";
import { clipRows, type FrameSource, frameFile, framesPayload } from "./frames.js";
import { appPage } from "./page.js";
import { cacheDirFor, replayPlan } from "./replay.js";
import { renderClip } from "./video.js";

const allCells = (read: FinishedRun) => read.report.episodes.map((e) => e.cell);

export interface ViewOptions {
  dirs: string[];
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  cacheRoot: string;
  calibrations?: Record<string, LoadedCalibration>;
}

export interface ViewServer {
  url: string;
  server: Server;
  catalog: Catalog;
  close(): Promise<void>;
}

const RUN_ID = /^[0-9a-f]{10}$/;
/** A clip's address: the cell id, or any prefix of it (resolved against the run), and a type. */
const CLIP = /^(c[0-9a-f]{1,20})\.(gif|mp4|webm)$/;

const SECURITY_HEADERS = {
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cross-Origin-Resource-Policy": "same-origin",
  "Content-Security-Policy":
    "default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

const TYPES: Record<string, string> = {
  png: "image/png",
  gif: "image/gif",
  mp4: "video/mp4",
  webm: "video/webm",
};

function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    "Content-Type": type,
    "Content-Length": Buffer.byteLength(body),
    "Cache-Control": "no-store",
  });
  res.end(body);
}

const json = (res: ServerResponse, status: number, value: unknown) =>
  send(res, status, "application/json; charset=utf-8", JSON.stringify(value));

function sendFile(res: ServerResponse, path: string, type: string, head: boolean): void {
  const size = statSync(path).size;
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    "Content-Type": type,
    "Content-Length": size,
    "Cache-Control": "private, max-age=3600",
  });
  if (head) res.end();
  else createReadStream(path).pipe(res);
}

function statusFor(e: unknown): number {
  if (!isProvaelError(e)) return 500;
  if (e.code === "run/not-found") return 404;
  if (e.code.startsWith("config/") || e.code === "io/malformed") return 400;
  return 500;
}

/** Splits a request path into decoded segments; a segment that decodes to a path is refused. */
export function segments(pathname: string): string[] | null {
  const parts = pathname.split("/").filter((s) => s.length > 0);
  const out: string[] = [];
  for (const p of parts) {
    let d: string;
    try {
      d = decodeURIComponent(p);
    } catch {
      return null;
    }
    if (d === "." || d === ".." || /[/\\\0]/.test(d)) return null;
    out.push(d);
  }
  return out;
}

/**
 * Whether a request's Host header may be answered: the names the server was started with, or any
 * IP literal at its port (DNS rebinding needs a name; `--host 0.0.0.0` is reached by address).
 */
export function hostAllowed(host: string, allowed: readonly string[]): boolean {
  if (allowed.includes(host)) return true;
  const port = allowed[0]?.slice(allowed[0].lastIndexOf(":"));
  if (!port || !host.endsWith(port)) return false;
  const name = host.slice(0, host.length - port.length);
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(name) || /^\[[0-9a-f:.]+\]$/.test(name);
}

/** The request handler, on its own so that tests can drive it. */
export function viewHandler(options: ViewOptions, catalog: Catalog, allowedHosts: () => string[]) {
  const src: FrameSource = {
    catalog,
    cacheRoot: options.cacheRoot,
    calibrations: options.calibrations ?? {},
  };
  const page = appPage({ mode: "server", version: TOOL_VERSION });
  return async (req: IncomingMessage, res: ServerResponse) => {
    try {
      if (req.method !== "GET" && req.method !== "HEAD") {
        res.setHeader("Allow", "GET, HEAD");
        return json(res, 405, { error: "the viewer is read-only: GET and HEAD only" });
      }
      const host = (req.headers.host ?? "").toLowerCase();
      if (!hostAllowed(host, allowedHosts())) {
        return json(res, 421, { error: `requests for host '${host.slice(0, 80)}' are not served` });
      }
      const url = new URL(req.url ?? "/", "http://viewer.invalid");
      const seg = segments(url.pathname);
      if (seg === null) return json(res, 400, { error: "bad path" });
      const head = req.method === "HEAD";
      const [top, a, b, c] = seg;
      if (seg.length === 0 || (seg.length === 1 && top === "index.html"))
        return send(res, 200, "text/html; charset=utf-8", page);
      if (top === "api") {
        if (a === "runs" && seg.length === 2) return json(res, 200, runsPayload(catalog));
        if (a === "runs" && b && RUN_ID.test(b)) {
          if (seg.length === 3) return json(res, 200, runPayload(catalog, b));
          if (seg.length === 5 && c === "episode")
            return json(res, 200, episodePayload(catalog, b, seg[4] as string));
          if (seg.length === 5 && c === "frames")
            return json(res, 200, await framesPayload(src, b, seg[4] as string));
        }
        if (a === "compare" && seg.length === 4 && b && RUN_ID.test(b) && RUN_ID.test(c ?? ""))
          return json(res, 200, comparePayload(catalog, b, c as string));
        return json(res, 404, { error: "no such API endpoint" });
      }
      if (top === "files" && seg.length === 4 && a && RUN_ID.test(a)) {
        const path = frameFile(src, a, checkCell(b as string), c as string);
        return sendFile(res, path, TYPES.png as string, head);
      }
      // The run's own showcase clip (the one report.html embeds), once checked against its info.
      if (top === "clip" && seg.length === 3 && a && RUN_ID.test(a) && b === "showcase.webm") {
        const read = readable(catalog, a);
        if (read.state !== "finished" || showcaseClipOf(read, [...allCells(read)]) === null)
          return json(res, 404, { error: "this run has no showcase clip" });
        const path = join(read.dir, RUN_FILES.showcaseClip);
        const st = lstatSync(path);
        if (!st.isFile()) return json(res, 404, { error: "this run has no showcase clip" });
        assertInside(read.dir, path);
        return sendFile(res, path, TYPES.webm as string, head);
      }
      if (top === "video" && seg.length === 3 && a && RUN_ID.test(a)) {
        const m = CLIP.exec(b ?? "");
        if (!m) return json(res, 400, { error: "clips are <cell>.gif, .mp4 or .webm" });
        const ext = m[2] as string;
        const twin = url.searchParams.get("twin") !== "0";
        const read = readable(catalog, a);
        const { plan, reason } = replayPlan(read, src.calibrations);
        if (!plan) return json(res, 404, { error: `no clip: ${reason}` });
        const report = reportOf(read)?.report;
        if (!report) return json(res, 404, { error: `run ${a} has no episodes yet` });
        const cell = findPair(report, m[1] as string).episode.cell;
        const dir = join(cacheDirFor(options.cacheRoot, plan, cell), "clips");
        const out = join(dir, `${twin ? "pair" : "single"}.${ext}`);
        if (!existsSync(out)) {
          mkdirSync(dir, { recursive: true });
          await renderClip(await clipRows(src, a, cell, twin), { out });
        }
        res.setHeader(
          "Content-Disposition",
          `attachment; filename="${cell}${twin ? "-pair" : ""}.${ext}"`,
        );
        return sendFile(res, out, TYPES[ext] as string, head);
      }
      return json(res, 404, { error: "not found" });
    } catch (e) {
      const status = statusFor(e);
      const message = e instanceof Error ? e.message : String(e);
      if (!res.headersSent)
        json(res, status, {
          error: message,
          ...(isProvaelError(e) ? { code: e.code, hint: e.hint ?? null } : {}),
        });
      else res.destroy();
    }
  };
}

/** Starts the viewer; resolves once it listens, with the URL to open. */
export async function startViewServer(options: ViewOptions): Promise<ViewServer> {
  const catalog = new Catalog(options.dirs);
  catalog.assertOutsideRuns(options.cacheRoot, "--cache");
  const host = options.host ?? "127.0.0.1";
  let port = options.port ?? 0;
  const hosts = () => {
    const names = [host, "127.0.0.1", "localhost", "[::1]"];
    return names.map((n) =>
      `${n.includes(":") && !n.startsWith("[") ? `[${n}]` : n}:${port}`.toLowerCase(),
    );
  };
  const server = createServer(viewHandler(options, catalog, hosts));
  await new Promise<void>((resolveListen, reject) => {
    server.once("error", (e: NodeJS.ErrnoException) =>
      reject(
        new ProvaelError("config/invalid", `cannot listen on ${host}:${port}: ${e.message}`, {
          cause: e,
          hint:
            e.code === "EADDRINUSE" ? "pick another --port, or 0 for a free one" : "check --host",
        }),
      ),
    );
    server.listen(port, host, () => resolveListen());
  });
  port = (server.address() as AddressInfo).port;
  const shown = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}/`,
    server,
    catalog,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
