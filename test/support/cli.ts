import { spawnSync } from "node:child_process";
import { join } from "node:path";

export const CLI = join(import.meta.dirname, "..", "..", "dist", "cli", "main.js");

/** Runs the built CLI and returns its exit code and output. */
export function runCli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    encoding: "utf8",
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    timeout: 120_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, signal: r.signal };
}
