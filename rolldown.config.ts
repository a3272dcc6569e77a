/**
 * The viewer's browser code, bundled at `npm run build` (after tsc): each entry under
 * src/view/client becomes one classic script in dist/view/client (IIFE: a page opened from
 * file:// may not load modules). `app` is inlined by src/view/page.ts; `open` is the page that
 * opens run directories in the browser (src/view/open-page.ts), which carries the built-in
 * plugins' facts (caveats, hazard zones, arms) read here from the registries tsc just built.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { defineConfig, type Plugin } from "rolldown";
// @ts-expect-error: a plain ES module of the build scripts, without types.
import { browserTwins } from "./scripts/browser-twins.mjs";

const version = JSON.parse(readFileSync("package.json", "utf8")).version as string;

const FACTS_MODULE = resolve("src/view/client/files/facts.ts");

const pageFacts: Plugin = {
  name: "provael-page-facts",
  async load(id) {
    if (resolve(id) !== FACTS_MODULE) return null;
    const built = pathToFileURL(resolve("dist/view/facts.js")).href;
    const { pageFacts: read } = (await import(built)) as { pageFacts(): unknown };
    return `export const FACTS = ${JSON.stringify(read())};`;
  },
};

const entry = (name: string) => ({
  input: `src/view/client/${name}.ts`,
  platform: "browser" as const,
  // Sources import `./x.js` (NodeNext); the bundler reads the `.ts` beside it.
  resolve: { extensionAlias: { ".js": [".ts", ".js"] } },
  // Each host module's browser twin in its place (the page computes digests, for one).
  plugins: [pageFacts, browserTwins as Plugin],
  transform: { define: { __PROVAEL_VERSION__: JSON.stringify(version) } },
  output: {
    file: `dist/view/client/${name}.js`,
    format: "iife" as const,
    minify: true,
    comments: { legal: false },
  },
});

export default defineConfig([entry("app"), entry("open")]);
