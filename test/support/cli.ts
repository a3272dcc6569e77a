import { spawnSync } from "node:child_process";
import { join } from "node:path";

export const CLI = join(import.meta.dirname, "..", "..", "dist", "cli", "main.js");

/** How long one CLI call may take before it is killed; a test may give a longer one. */
const DEFAULT_TIMEOUT_MS = 120_000;

/**
 * Runs the built CLI and returns its exit code and output. A call killed for taking too long
 * throws, naming the command and what it printed, rather than returning a null exit code that a
 * test would report as an unexplained mismatch (on a loaded 2-core machine this is what a slow
 * run looks like).
 */
export function runCli(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
) {
  const timeout = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const r = spawnSync(process.execPath, [CLI, ...args], {
    encoding: "utf8",
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    timeout,
  });
  if ((r.error as NodeJS.ErrnoException | undefined)?.code === "ETIMEDOUT") {
    throw new Error(
      `provael ${args.join(" ")} was killed after ${timeout / 1000} s; it had printed:\n${r.stderr.slice(-2000)}`,
    );
  }
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, signal: r.signal };
}
