/**
 * One writer per run directory. Two `provael attack --resume` (or two bridges) on one directory
 * would both append to its journal and sweep each other's temporary files; the second is told
 * who holds it instead. The lock is a file created exclusively, naming the holder's host and
 * process; a holder that died (same host, no such process) leaves a stale lock that the next
 * writer takes over. The file is removed when the holder lets go, so a finished run directory
 * holds only its outputs.
 *
 * @example
 *   const lock = lockRunDir(out, "--out");
 *   try { play and finalise } finally { lock.release(); }
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeSync,
} from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { ProvaelError } from "../core/errors.js";

export const LOCK_FILE = ".provael.lock";

interface Holder {
  pid: number;
  host: string;
  /** What holds it, e.g. "provael attack". */
  what: string;
}

export interface RunLock {
  readonly path: string;
  /** Lets go (idempotent); only a lock this process still holds is removed. */
  release(): void;
}

/** Whether a process of this host with this id runs (a process we may not signal runs too). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readHolder(path: string): Holder | null {
  try {
    const h = JSON.parse(readFileSync(path, "utf8")) as Partial<Holder>;
    return typeof h.pid === "number" && typeof h.host === "string"
      ? { pid: h.pid, host: h.host, what: typeof h.what === "string" ? h.what : "provael" }
      : null;
  } catch {
    return null;
  }
}

/**
 * Takes the directory's lock (the directory must exist), or says who holds it. `flag` names
 * the option that chose the directory, for the message.
 */
export function lockRunDir(dir: string, flag: string, what = "provael"): RunLock {
  const path = join(dir, LOCK_FILE);
  const me: Holder = { pid: process.pid, host: hostname(), what };
  for (let attempt = 0; ; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, "wx");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") {
        throw new ProvaelError("io/write", `cannot lock ${dir}: ${(e as Error).message}`, {
          hint: `check that ${flag} names a directory you can write to`,
        });
      }
      const holder = readHolder(path);
      // A lock of a process of this host that no longer runs is stale; so is one that cannot
      // be read (its writer died between creating and writing it). Taken over once.
      const stale =
        holder === null || (holder.host === me.host && holder.pid !== me.pid && !alive(holder.pid));
      if (stale && attempt === 0) {
        rmSync(path, { force: true });
        continue;
      }
      const who = holder
        ? `${holder.what} (process ${holder.pid} on ${holder.host})`
        : "another process";
      throw new ProvaelError("run/out-exists", `${dir} is in use by ${who}`, {
        details: { out: dir, lock: path, ...(holder ? { holder } : {}) },
        hint: `wait for it to finish or stop it, or choose another ${flag}; if no such process runs, delete ${path}`,
      });
    }
    try {
      writeSync(fd, `${JSON.stringify(me)}\n`);
    } finally {
      closeSync(fd);
    }
    let held = true;
    return {
      path,
      release() {
        if (!held) return;
        held = false;
        const now = readHolder(path);
        if (now && now.pid === me.pid && now.host === me.host) rmSync(path, { force: true });
      },
    };
  }
}

/**
 * Creates the directory if need be and takes its lock before anything reads it, so no other
 * writer changes it between the look and the first line this one writes. `entries` are what it
 * held besides the lock (null: it was just created).
 */
export function claimRunDir(
  dir: string,
  flag: string,
  what: string,
): { lock: RunLock; entries: string[] | null } {
  const fresh = !existsSync(dir);
  if (fresh) mkdirSync(dir, { recursive: true });
  const lock = lockRunDir(dir, flag, what);
  return { lock, entries: fresh ? null : readdirSync(dir).filter((e) => e !== LOCK_FILE) };
}
