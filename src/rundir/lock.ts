/**
 * One writer per run directory. Two `provael attack --resume` (or two bridges) on one directory
 * would both append to its journal and sweep each other's temporary files; the second is told
 * who holds it instead. The lock file names the holder's host, process and a nonce of this
 * taking; a holder that is gone (same host, no such process, or a zombie its parent has not yet
 * reaped) leaves a stale lock that the next writer takes over at once. The file is removed when
 * the holder lets go, so a finished run directory holds only its outputs.
 *
 * No moment exists in which two processes both believe they hold it:
 * - the lock file appears whole: its content is written to a file of the taker's own and then
 *   hard-linked to the lock's name, which fails when the name exists (no empty or half-written
 *   lock file is ever seen, so one that cannot be read is damage, not a race);
 * - a stale lock is replaced by whoever first links a takeover marker named after the stale
 *   lock's nonce; only that process may replace it, and only while it still holds that nonce.
 *
 * @example
 *   const lock = lockRunDir(out, "--out");
 *   try { play and finalise } finally { lock.release(); }
 */
import {
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
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
  /** Tells this taking from another by the same process (absent in older lock files). */
  nonce?: string;
}

export interface RunLock {
  readonly path: string;
  /** Lets go (idempotent); only a lock this process still holds is removed. */
  release(): void;
}

/**
 * Whether a process of this host with this id runs (a process we may not signal runs too). A
 * zombie, dead and waiting for its parent to reap it, does not: where /proc tells (Linux), its
 * state is read.
 */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return true;
  }
  // "pid (comm) S ...": comm may hold spaces and parentheses, so the state follows the last ')'.
  const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  return state !== "Z" && state !== "X";
}

type Read = { kind: "holder"; holder: Holder } | { kind: "missing" } | { kind: "unreadable" };

function readHolder(path: string): Read {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT"
      ? { kind: "missing" }
      : { kind: "unreadable" };
  }
  try {
    const h = JSON.parse(text) as Partial<Holder>;
    if (typeof h.pid === "number" && typeof h.host === "string")
      return {
        kind: "holder",
        holder: {
          pid: h.pid,
          host: h.host,
          what: typeof h.what === "string" ? h.what : "provael",
          ...(typeof h.nonce === "string" ? { nonce: h.nonce } : {}),
        },
      };
  } catch {
    // Not JSON: damaged.
  }
  return { kind: "unreadable" };
}

const sameTaking = (a: Holder, b: Holder) =>
  a.pid === b.pid && a.host === b.host && a.nonce === b.nonce;

/** A holder of this host whose process is gone (or a zombie). */
const stale = (h: Holder, me: Holder) => h.host === me.host && h.pid !== me.pid && !alive(h.pid);

let takings = 0;

/**
 * Takes the directory's lock (the directory must exist), or says who holds it. `flag` names
 * the option that chose the directory, for the message.
 */
export function lockRunDir(dir: string, flag: string, what = "provael"): RunLock {
  const path = join(dir, LOCK_FILE);
  takings += 1;
  const me: Holder = {
    pid: process.pid,
    host: hostname(),
    what,
    nonce: `${process.pid}-${process.hrtime.bigint()}-${takings}`,
  };
  const mine = `${path}.${me.nonce}`;
  const inUse = (read: Read, extra = "") => {
    const holder = read.kind === "holder" ? read.holder : null;
    const who = holder
      ? `${holder.what} (process ${holder.pid} on ${holder.host})`
      : "another process (its lock file cannot be read)";
    const { nonce: _n, ...shown } = holder ?? { nonce: undefined };
    return new ProvaelError("run/out-exists", `${dir} is in use by ${who}${extra}`, {
      details: { out: dir, lock: path, ...(holder ? { holder: shown } : {}) },
      hint: `wait for it to finish or stop it, or choose another ${flag}; if no such process runs, delete ${path}`,
    });
  };
  try {
    writeFileSync(mine, `${JSON.stringify(me)}\n`, { flag: "wx" });
  } catch (e) {
    throw new ProvaelError("io/write", `cannot lock ${dir}: ${(e as Error).message}`, {
      hint: `check that ${flag} names a directory you can write to`,
    });
  }
  try {
    // Each round either takes the lock, refuses, or sees it change hands (bounded: a lock that
    // keeps changing hands this often is in use).
    for (let round = 0; round < 20; round++) {
      try {
        linkSync(mine, path);
        return held(path, me);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      }
      const read = readHolder(path);
      if (read.kind === "missing") continue;
      if (read.kind === "unreadable" || !stale(read.holder, me)) throw inUse(read);
      if (takeOver(path, mine, read.holder, me)) return held(path, me);
    }
    throw inUse(readHolder(path));
  } catch (e) {
    if (e instanceof ProvaelError) throw e;
    throw new ProvaelError("io/write", `cannot lock ${dir}: ${(e as Error).message}`, {
      hint: `check that ${flag} names a directory you can write to`,
    });
  } finally {
    rmSync(mine, { force: true });
  }
}

/**
 * Replaces the stale lock of `gone` with `mine` when this process is the one allowed to: the
 * first to link the marker named after that taking. Returns whether it now holds the lock.
 */
function takeOver(path: string, mine: string, gone: Holder, me: Holder): boolean {
  const marker = `${path}.takeover-${gone.host}-${gone.pid}-${gone.nonce ?? "old"}`;
  try {
    linkSync(mine, marker);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    // Another taker is at it; if it died there, its marker goes and the next round tries again.
    const other = readHolder(marker);
    if (other.kind === "holder" && stale(other.holder, me)) rmSync(marker, { force: true });
    return false;
  }
  try {
    const now = readHolder(path);
    // Only the stale taking may be replaced: nobody else removes it (its holder is gone) and
    // nobody else may replace it (they lost the marker), so the name cannot change before the
    // rename below.
    if (now.kind !== "holder" || !sameTaking(now.holder, gone)) return false;
    const copy = `${mine}.new`;
    linkSync(mine, copy);
    renameSync(copy, path);
    return true;
  } finally {
    rmSync(marker, { force: true });
  }
}

function held(path: string, me: Holder): RunLock {
  let holding = true;
  return {
    path,
    release() {
      if (!holding) return;
      holding = false;
      const now = readHolder(path);
      if (now.kind === "holder" && sameTaking(now.holder, me)) rmSync(path, { force: true });
    },
  };
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
  return {
    lock,
    entries: fresh ? null : readdirSync(dir).filter((e) => !e.startsWith(LOCK_FILE)),
  };
}
