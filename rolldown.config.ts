/**
 * The viewer's browser code, bundled at `npm run build` (after tsc): each entry under
 * src/view/client becomes one classic script in dist/view/client (IIFE: a page opened from
 * file:// may not load modules), which src/view/page.ts inlines or writes beside its page.
 */
import { defineConfig } from "rolldown";

const entry = (name: string) => ({
  input: `src/view/client/${name}.ts`,
  platform: "browser" as const,
  // Sources import `./x.js` (NodeNext); the bundler reads the `.ts` beside it.
  resolve: { extensionAlias: { ".js": [".ts", ".js"] } },
  output: {
    file: `dist/view/client/${name}.js`,
    format: "iife" as const,
    minify: true,
    comments: { legal: false },
  },
});

export default defineConfig([entry("app")]);
