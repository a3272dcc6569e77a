import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

/**
 * The e2e tests run the built CLI: build once before any test file runs. Type errors are the
 * business of `npm run typecheck`; tsc still emits JavaScript, which is all the tests need.
 */
export default function setup(): void {
  try {
    execFileSync("npx", ["tsc", "-p", "tsconfig.build.json"], { stdio: "pipe" });
  } catch {
    // Reported by `npm run typecheck`.
  }
  const cli = join(import.meta.dirname, "..", "..", "dist", "cli", "main.js");
  if (!existsSync(cli)) throw new Error(`build produced no ${cli}`);
}
