import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..");

function newestSource(dir: string): number {
  let newest = 0;
  for (const f of readdirSync(dir)) {
    const p = join(dir, f);
    const s = statSync(p);
    newest = Math.max(newest, s.isDirectory() ? newestSource(p) : s.mtimeMs);
  }
  return newest;
}

/**
 * The e2e tests run the built CLI and worker threads load built modules: build before any test
 * file runs, unless the build is already newer than every source file. A build with type errors
 * stops the tests: tsc would still emit JavaScript, and the tests would pass on code that does
 * not type-check (`npm run typecheck` covers the test files as well).
 */
export default function setup(): void {
  const cli = join(ROOT, "dist", "cli", "main.js");
  if (existsSync(cli) && statSync(cli).mtimeMs > newestSource(join(ROOT, "src"))) return;
  try {
    execFileSync("npx", ["tsc", "-p", "tsconfig.build.json"], { cwd: ROOT, stdio: "pipe" });
  } catch (err) {
    const out = (err as { stdout?: Buffer }).stdout?.toString() ?? "";
    throw new Error(`the build has errors (tsc -p tsconfig.build.json):\n${out.slice(0, 4000)}`);
  }
  if (!existsSync(cli)) throw new Error(`build produced no ${cli}`);
}
