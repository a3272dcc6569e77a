/**
 * The rolldown plugin that puts each host module's browser twin in its place (`x.browser.ts`
 * beside `x.ts`, docs/adr/0010-two-hosts.md), for every bundle a browser runs: the playground
 * (scripts/build-playground.mjs) and the viewer's pages (rolldown.config.ts).
 */
import { existsSync } from "node:fs";

export const browserTwins = {
  name: "provael-browser-twins",
  async resolveId(source, importer, options) {
    if (!importer || !source.startsWith(".")) return null;
    const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
    if (!resolved?.id.endsWith(".ts") || resolved.id.endsWith(".browser.ts")) return null;
    const twin = resolved.id.replace(/\.ts$/, ".browser.ts");
    return existsSync(twin) ? twin : null;
  },
};
