import cliProgress from "cli-progress";

/** How a run shows its progress: a bar on a terminal, plain lines in logs and pipes, or nothing. */
export type ProgressMode = "tty" | "lines" | "off";

export interface Progress {
  update(done: number, total: number, errors?: number): void;
  stop(): void;
}

/** "1m05s", "42s", "2h03m"; "—" before the rate is known. */
export function formatEta(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds) || seconds < 0) return "—";
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** Episodes per second and seconds left, from the episodes finished since this invocation began. */
export function rateAndEta(
  done: number,
  first: number,
  total: number,
  seconds: number,
): { rate: number | null; eta: number | null } {
  const played = done - first;
  if (played <= 0 || seconds <= 0) return { rate: null, eta: done >= total ? 0 : null };
  const rate = played / seconds;
  return { rate, eta: (total - done) / rate };
}

/** One plain progress line: done, rate, ETA and errors so far. */
export function progressLine(
  done: number,
  total: number,
  errors: number,
  rate: number | null,
  eta: number | null,
): string {
  const pctDone = total > 0 ? Math.floor((100 * done) / total) : 100;
  return `progress: ${done}/${total} episodes (${pctDone}%), ${rate === null ? "—" : rate.toFixed(2)} ep/s, ETA ${formatEta(eta)}, ${errors} error${errors === 1 ? "" : "s"}`;
}

/**
 * Progress of a run. On a terminal, a bar whose ETA is ours (cli-progress's own reads "NF" until
 * its buffer fills). Off a terminal, a line every 10 seconds or every 5% of the episodes, whichever
 * comes first, so CI logs show a run is alive.
 */
export function progressReporter(
  mode: ProgressMode,
  stream: NodeJS.WritableStream = process.stderr,
  options: { everyMs?: number; now?: () => number } = {},
): Progress {
  if (mode === "off") return { update() {}, stop() {} };
  const now = options.now ?? (() => performance.now());
  const everyMs = options.everyMs ?? 10_000;
  const t0 = now();
  let first: number | null = null;
  let state = { done: 0, total: 0, errors: 0 };
  const stats = () => rateAndEta(state.done, first ?? state.done, state.total, (now() - t0) / 1000);

  if (mode === "lines") {
    let lastAt = t0;
    let lastDone = -1;
    const emit = () => {
      const { rate, eta } = stats();
      stream.write(`${progressLine(state.done, state.total, state.errors, rate, eta)}\n`);
      lastAt = now();
      lastDone = state.done;
    };
    const timer = setInterval(
      () => {
        if (first !== null && now() - lastAt >= everyMs) emit();
      },
      Math.min(everyMs, 1000),
    );
    timer.unref();
    return {
      update(done, total, errors = 0) {
        if (first === null) first = done;
        state = { done, total, errors };
        const step = Math.max(1, Math.ceil(total * 0.05));
        // A count already printed is printed again only as the 10-second heartbeat: the runner
        // reports the last episode more than once (finished, then flushed).
        const moved =
          done !== lastDone && (lastDone < 0 || done - lastDone >= step || done === total);
        if (moved || now() - lastAt >= everyMs) emit();
      },
      stop() {
        clearInterval(timer);
      },
    };
  }

  const bar = new cliProgress.SingleBar(
    {
      format: "episodes {bar} {value}/{total} | {eps} ep/s | ETA {eta_text} | {errors} errors",
      hideCursor: true,
      clearOnComplete: true,
      stream: stream as NodeJS.WriteStream,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  const payload = () => {
    const { rate, eta } = stats();
    return {
      eps: rate === null ? "—" : rate.toFixed(2),
      eta_text: formatEta(eta),
      errors: state.errors,
    };
  };
  // Redraw once a second so the ETA counts down while a long episode plays.
  const timer = setInterval(() => {
    if (started) bar.update(state.done, payload());
  }, 1000);
  timer.unref();
  return {
    update(done, total, errors = 0) {
      state = { done, total, errors };
      if (!started) {
        first = done;
        bar.start(total, done, payload());
        started = true;
      }
      bar.update(done, payload());
    },
    stop() {
      clearInterval(timer);
      if (started) bar.stop();
    },
  };
}

/** The mode for this process: the bar on a terminal, lines otherwise, nothing for --json. */
export function progressMode(json: boolean, isTty: boolean): ProgressMode {
  if (json) return "off";
  return isTty ? "tty" : "lines";
}
