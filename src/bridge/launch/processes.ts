/**
 * The benchmark processes of a launched run: each a shell command with its own log. A process
 * that exits non-zero is recorded with its code and the last lines of its log; the others go on.
 */
import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync, writeSync } from "node:fs";

export interface LaunchJob {
  /** Stable id (the log's name without `.log`). */
  id: string;
  command: string;
  log: string;
}

export interface JobExit {
  id: string;
  /** The exit code; null when a signal ended it. */
  code: number | null;
  signal: string | null;
  /** Stopped by us (Ctrl-C), not failed. */
  stopped: boolean;
  /** The last lines of its log. */
  tail: string[];
}

const TAIL_LINES = 20;

/** The last `n` non-empty lines of a log file (a missing file has none). */
export function logTail(path: string, n = TAIL_LINES): string[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .slice(-n);
}

/**
 * Benchmark processes, at most `concurrency` at once, started in the order added. `stop()`
 * sends SIGTERM to every running process group (SIGKILL 5 s later) and starts nothing more;
 * `finished()` resolves once `seal()` was called and every started process has ended.
 */
export class JobPool {
  private readonly queue: LaunchJob[] = [];
  private readonly running = new Map<string, number>();
  private readonly exits: JobExit[] = [];
  private readonly stoppedIds: string[] = [];
  private sealed = false;
  private stopping = false;
  private resolve: ((exits: JobExit[]) => void) | null = null;
  private readonly done: Promise<JobExit[]>;

  constructor(
    private readonly o: {
      concurrency: number;
      env?: NodeJS.ProcessEnv;
      onStart?: (job: LaunchJob) => void;
      onExit?: (exit: JobExit) => void;
    },
  ) {
    this.done = new Promise((r) => {
      this.resolve = r;
    });
  }

  add(jobs: readonly LaunchJob[]): void {
    this.queue.push(...jobs);
    this.next();
  }

  /** No more jobs will be added. */
  seal(): void {
    this.sealed = true;
    this.next();
  }

  /** Kills the running processes (those of `ids` only, when given); with no ids, starts no more. */
  stop(ids?: readonly string[]): void {
    if (ids === undefined) {
      this.stopping = true;
      this.queue.length = 0;
    }
    const targets = [...this.running].filter(([id]) => ids === undefined || ids.includes(id));
    for (const [, pid] of targets) signalGroup(pid, "SIGTERM");
    const later = setTimeout(() => {
      for (const [id, pid] of targets) if (this.running.has(id)) signalGroup(pid, "SIGKILL");
    }, 5_000);
    later.unref();
    this.stoppedIds.push(...targets.map(([id]) => id));
    this.next();
  }

  /** Whether the job is waiting or running. */
  active(id: string): boolean {
    return this.running.has(id) || this.queue.some((j) => j.id === id);
  }

  finished(): Promise<JobExit[]> {
    return this.done;
  }

  private next(): void {
    while (!this.stopping && this.running.size < this.o.concurrency && this.queue.length > 0)
      this.start(this.queue.shift() as LaunchJob);
    if (this.running.size === 0 && (this.sealed || this.stopping) && this.queue.length === 0)
      this.resolve?.(this.exits);
  }

  private start(job: LaunchJob): void {
    const fd = openSync(job.log, "a");
    writeSync(fd, `$ ${job.command}\n`);
    // Its own process group, so a stop reaches what the shell started.
    const child = spawn("/bin/sh", ["-c", job.command], {
      stdio: ["ignore", fd, fd],
      detached: true,
      env: this.o.env ?? process.env,
    });
    closeSync(fd);
    this.running.set(job.id, child.pid as number);
    this.o.onStart?.(job);
    let ended = false;
    const finish = (code: number | null, sig: string | null) => {
      if (ended) return;
      ended = true;
      this.running.delete(job.id);
      const exit: JobExit = {
        id: job.id,
        code,
        signal: sig,
        stopped: this.stoppedIds.includes(job.id) && code !== 0,
        tail: logTail(job.log),
      };
      this.exits.push(exit);
      this.o.onExit?.(exit);
      this.next();
    };
    child.once("error", (e) => {
      const fd2 = openSync(job.log, "a");
      writeSync(fd2, `cannot start: ${e.message}\n`);
      closeSync(fd2);
      finish(127, null);
    });
    child.once("exit", (code, sig) => finish(code, sig));
  }
}

function signalGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    // Already gone.
  }
}
