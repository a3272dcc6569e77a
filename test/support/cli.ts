import { type ChildProcess, spawn, spawnSync } from "node:child_process";
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

/** CLI processes started by `startCli` in this test file, killed by `stopStarted`. */
const started: ChildProcess[] = [];

/**
 * Starts the built CLI (a server: `serve-policy`, `bridge`, … with `--json`) and resolves with
 * the first line it prints, parsed as JSON; rejects, with what it printed, if it exits first.
 * Call `stopStarted` in the file's `afterAll`.
 */
export function startCli(
  args: string[],
): Promise<{ line: unknown; child: ChildProcess; stderr: () => string }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  started.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stderr?.on("data", (d) => {
      err += d;
    });
    child.stdout?.on("data", (d) => {
      out += d;
      const nl = out.indexOf("\n");
      if (nl >= 0) resolve({ line: JSON.parse(out.slice(0, nl)), child, stderr: () => err });
    });
    child.once("exit", (code) => reject(new Error(`${args[0]} exited ${code}: ${err}`)));
  });
}

/** `provael serve-policy ARGS --port 0 --json` started; resolves with its address. */
export async function servePolicy(args: string[]): Promise<string> {
  const { line } = await startCli(["serve-policy", ...args, "--port", "0", "--json"]);
  return (line as { url: string }).url;
}

/** Kills what `startCli` started and is still running. */
export function stopStarted(): void {
  for (const c of started.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
}
