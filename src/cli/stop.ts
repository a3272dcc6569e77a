/**
 * Ctrl-C and SIGTERM for the long commands (attack, record, train): the first signal asks the
 * work to stop at its next safe point and keep what it has (the command's own `stopping` line),
 * a second abandons it at once (`abandoned`, exit 130). Where nothing could be kept yet
 * (`canStop` false) the first signal already abandons. A caller that signals and stops reading
 * (closing its pipes) does not change that: lines for it are dropped (main.ts).
 */
import { EXIT } from "./exit.js";

export interface StopOnSignal {
  /** Aborted by the first signal: the work stops at its next safe point. */
  signal: AbortSignal;
  /** Removes the handlers (the work is over). */
  release: () => void;
}

export function stopOnSignal(o: {
  /** Clears the progress display before a line is written. */
  quiet: () => void;
  /** What the first signal says the command will do (a function: what it will do now). */
  stopping: string | (() => string);
  /** What a second signal (or a first with nothing to keep) says before exiting 130. */
  abandoned: () => string;
  /** Whether a stop would keep anything now (default: always). */
  canStop?: () => boolean;
}): StopOnSignal {
  const stop = new AbortController();
  const onSignal = () => {
    o.quiet();
    if (!stop.signal.aborted && (o.canStop?.() ?? true)) {
      process.stderr.write(`${typeof o.stopping === "string" ? o.stopping : o.stopping()}\n`);
      stop.abort();
      return;
    }
    process.stderr.write(o.abandoned());
    process.exit(EXIT.interrupted);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    signal: stop.signal,
    release: () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}
