import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

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

declare module "vitest" {
  export interface ProvidedContext {
    /** Where test/support/shared-run.ts keeps the runs test files share, for this `npm test`. */
    sharedRunsDir: string;
  }
}

/**
 * The e2e tests run the built CLI and worker threads load built modules: build before any test
 * file runs, unless the build is already newer than every source file (a fresh clone's `npm ci`
 * has just built it). A build with type errors stops the tests: tsc would still emit
 * JavaScript, and the tests would pass on code that does not type-check (`npm run typecheck`
 * covers the test files as well). The compiler is run directly, not through `npx`, which would
 * start npm first.
 */
export default function setup(project: TestProject): () => void {
  const cli = join(ROOT, "dist", "cli", "main.js");
  if (!existsSync(cli) || statSync(cli).mtimeMs <= newestSource(join(ROOT, "src"))) {
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    try {
      execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json"], {
        cwd: ROOT,
        stdio: "pipe",
      });
    } catch (err) {
      const out = (err as { stdout?: Buffer }).stdout?.toString() ?? "";
      throw new Error(`the build has errors (tsc -p tsconfig.build.json):\n${out.slice(0, 4000)}`);
    }
    if (!existsSync(cli)) throw new Error(`build produced no ${cli}`);
  }
  // Runs shared between test files live as long as this `npm test`, built by whichever file
  // asks first (test/support/shared-run.ts).
  const shared = mkdtempSync(join(tmpdir(), "provael-shared-runs-"));
  project.provide("sharedRunsDir", shared);
  return () => {
    if (process.env.PROVAEL_KEEP_TEST_DIRS !== "1")
      rmSync(shared, { recursive: true, force: true });
  };
}
