/**
 * Runs played once per `npm test` and read by every test file that needs the same one. A test
 * that only reads a finished run (re-renders it, refuses to overwrite it, signs it) does not
 * need a run of its own: `sharedRun(args)` plays `provael <args> --out DIR` the first time any
 * file asks for those exact arguments, and returns the same directory, exit code and output to
 * every later caller, in this file or another. The directory is shared: a test that writes into
 * a run (an attestation, a regression report, an edited journal) works on `copyRun(run)`.
 *
 * The first caller plays the run while holding a lock directory; a caller in another worker
 * waits for it. The directories live under the folder global-setup.ts made for this
 * `npm test`, which it removes at the end.
 */
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { inject } from "vitest";
import { runCli } from "./cli.js";
import { tempDir } from "./tmp.js";

export interface SharedRun {
  /** The run directory (`--out`): read it, never write into it. */
  dir: string;
  code: number | null;
  stdout: string;
  stderr: string;
}

/** How long a caller waits for another worker to finish playing the run it asked for. */
const WAIT_MS = 600_000;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Another worker's run being played: wait for its result file, or say why not. */
function awaitResult(result: string, lock: string, what: string): SharedRun {
  const until = Date.now() + WAIT_MS;
  while (!existsSync(result)) {
    if (!existsSync(lock) && !existsSync(result))
      throw new Error(`the shared run '${what}' failed in another test file`);
    if (Date.now() > until) throw new Error(`the shared run '${what}' took over ${WAIT_MS} ms`);
    Atomics.wait(sleeper, 0, 0, 100);
  }
  return JSON.parse(readFileSync(result, "utf8")) as SharedRun;
}

/**
 * `provael <args> --out DIR`, played once for all test files that ask for the same `args`. The
 * caller checks the exit code it expects, as with `runCli`.
 */
export function sharedRun(args: readonly string[], options: { timeoutMs?: number } = {}) {
  const key = createHash("sha256").update(JSON.stringify(args)).digest("hex").slice(0, 16);
  const home = join(inject("sharedRunsDir"), key);
  const result = join(home, "result.json");
  const lock = join(home, "playing");
  const what = args.join(" ");
  if (existsSync(result)) return JSON.parse(readFileSync(result, "utf8")) as SharedRun;
  try {
    mkdirSync(home, { recursive: true });
    mkdirSync(lock);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    return awaitResult(result, lock, what);
  }
  const dir = join(home, "run");
  try {
    const r = runCli([...args, "--out", dir], options);
    const run: SharedRun = { dir, code: r.code, stdout: r.stdout, stderr: r.stderr };
    writeFileSync(`${result}.tmp`, JSON.stringify(run));
    // The result appears whole or not at all: a waiting worker reads it once it exists.
    renameSync(`${result}.tmp`, result);
    return run;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** A private copy of a run, for a test that writes into it; removed with the test file's folders. */
export function copyRun(run: SharedRun | string): string {
  const copy = join(tempDir(), "run");
  cpSync(typeof run === "string" ? run : run.dir, copy, { recursive: true });
  return copy;
}
