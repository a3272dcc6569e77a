/**
 * Builds the playground's page and Web Worker into dist/playground/site (run by `npm run build`
 * after tsc), with the replay worker of the viewer's open page. One rolldown build of three
 * entries, ES modules with shared chunks (MuJoCo and TensorFlow.js load once, in the workers). Each host module with a browser twin beside it
 * (`x.browser.ts` next to `x.ts`, docs/adr/0010-two-hosts.md) is replaced by its twin; nothing of
 * Node is shimmed, and an import the browser cannot resolve fails the build.
 */
import { copyFileSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";
import { browserTwins } from "./browser-twins.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const OUT = join(ROOT, "dist", "playground", "site");
const WEB = join(ROOT, "src", "playground", "web");
const version = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;

const problems = [];
rmSync(OUT, { recursive: true, force: true });
await build({
  input: {
    page: join(WEB, "page.ts"),
    worker: join(WEB, "worker.ts"),
    // The worker the viewer's open page (viewer/open.html) replays dropped episodes with.
    replay: join(ROOT, "src", "view", "client", "replay", "worker.ts"),
  },
  platform: "browser",
  resolve: { extensionAlias: { ".js": [".ts", ".js"] } },
  transform: { define: { __PROVAEL_VERSION__: JSON.stringify(version) } },
  // mujoco-js imports Node's `module` only when it runs under Node.
  external: ["module"],
  plugins: [browserTwins],
  logLevel: "warn",
  onLog(level, log) {
    if (log.code === "UNRESOLVED_IMPORT" || level === "error") problems.push(log.message);
  },
  output: {
    dir: OUT,
    format: "esm",
    minify: true,
    comments: { legal: false },
    entryFileNames: "[name].js",
    chunkFileNames: "chunks/[name]-[hash].js",
  },
});
if (problems.length > 0) {
  console.error(`build-playground: the browser bundle cannot resolve:\n${problems.join("\n")}`);
  process.exit(1);
}
mkdirSync(OUT, { recursive: true });
for (const f of ["index.html", "style.css"]) copyFileSync(join(WEB, f), join(OUT, f));
