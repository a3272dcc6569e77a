/**
 * The playground as a static site (Node): the bundle `npm run build` made
 * (dist/playground/site), the package files a worker reads (MJCF scenes, the tiny-vla weights
 * and its backdoored twin) with their list, and tfjs-backend-wasm's `.wasm` files; and a static
 * server on 127.0.0.1 for it.
 */
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import { dirname, extname, join, normalize, relative, sep } from "node:path";
import { ProvaelError } from "../core/errors.js";
import { PACKAGE_ROOT } from "../core/package-root.js";

export const SITE_BUNDLE = join(PACKAGE_ROOT, "dist", "playground", "site");
/** Written into every site folder: a folder holding it may be written again. */
const MARKER = "provael-playground.json";
/** The package folders a worker reads, by package-relative path. */
const ASSET_DIRS = ["assets/mujoco", "assets/tiny-vla", "assets/tiny-vla-backdoored"];
const ASSET_FILE = /\.(xml|bin|json)$/;

/**
 * Writes the site into `out` (a new or empty folder, or an earlier site); returns its files.
 * `openPage` writes the page that opens run directories (the viewer's, src/view/open-page.ts)
 * into `viewer/`; the playground layer may not import the viewer, so its caller hands it over,
 * and the page's link to it is shown only when it is there.
 */
export function writeSite(out: string, openPage?: (dir: string) => string[]): string[] {
  if (!existsSync(join(SITE_BUNDLE, "page.js"))) {
    throw new ProvaelError(
      "internal/invariant",
      `the playground bundle is missing (${SITE_BUNDLE})`,
      {
        hint: "run `npm run build` (it bundles the playground after tsc)",
      },
    );
  }
  if (existsSync(out) && readdirSync(out).length > 0 && !existsSync(join(out, MARKER))) {
    throw new ProvaelError("run/out-exists", `${out} is not empty and holds no playground site`, {
      hint: "choose an empty or new --out folder",
    });
  }
  mkdirSync(out, { recursive: true });
  cpSync(SITE_BUNDLE, out, { recursive: true });
  const assets: string[] = [];
  for (const dir of ASSET_DIRS) {
    for (const f of readdirSync(join(PACKAGE_ROOT, dir))
      .filter((f) => ASSET_FILE.test(f))
      .sort()) {
      const rel = `${dir}/${f}`;
      mkdirSync(join(out, dir), { recursive: true });
      cpSync(join(PACKAGE_ROOT, rel), join(out, rel));
      assets.push(rel);
    }
  }
  writeFileSync(join(out, "assets", "files.json"), `${JSON.stringify(assets)}\n`);
  const wasmDir = dirname(createRequire(import.meta.url).resolve("@tensorflow/tfjs-backend-wasm"));
  mkdirSync(join(out, "wasm"), { recursive: true });
  for (const f of readdirSync(wasmDir).filter((f) => f.endsWith(".wasm")))
    cpSync(join(wasmDir, f), join(out, "wasm", f));
  if (openPage) {
    mkdirSync(join(out, "viewer"), { recursive: true });
    const names = openPage(join(out, "viewer"));
    const page = join(out, "index.html");
    const link = `<a id="viewer-link" href="viewer/${names[0]}">`;
    writeFileSync(page, readFileSync(page, "utf8").replace(/<a id="viewer-link"[^>]*>/, link));
  }
  writeFileSync(join(out, MARKER), `${JSON.stringify({ site: "provael-playground" })}\n`);
  return listFiles(out);
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => statSync(join(dir, f)).isFile())
    .map((f) => f.split(sep).join("/"))
    .sort();
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".xml": "application/xml",
  ".bin": "application/octet-stream",
  ".png": "image/png",
  ".svg": "image/svg+xml",
};

/**
 * Serves a folder on 127.0.0.1 (port 0: any free one); GET and HEAD only, nothing outside it.
 * `onRequest` hears every request as it arrives (the browser tests record what a page asked for).
 */
export function serveSite(
  root: string,
  port = 0,
  onRequest?: (method: string, url: string) => void,
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    onRequest?.(req.method ?? "", req.url ?? "");
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://127.0.0.1").pathname);
    const file = normalize(join(root, path.endsWith("/") ? `${path}index.html` : path));
    if (
      (req.method !== "GET" && req.method !== "HEAD") ||
      relative(root, file).startsWith("..") ||
      !existsSync(file) ||
      !statSync(file).isFile()
    ) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      "content-type": TYPES[extname(file)] ?? "application/octet-stream",
      "cache-control": "no-cache",
    });
    res.end(req.method === "HEAD" ? undefined : readFileSync(file));
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      const a = server.address();
      const p = typeof a === "object" && a ? a.port : port;
      resolve({ server, url: `http://127.0.0.1:${p}/` });
    });
  });
}
