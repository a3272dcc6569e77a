import cliProgress from "cli-progress";

/** A progress bar on a TTY (episodes, rate, ETA); nothing at all otherwise. */
export function progressBar(enabled: boolean): {
  update(done: number, total: number): void;
  stop(): void;
} {
  if (!enabled) return { update() {}, stop() {} };
  const bar = new cliProgress.SingleBar(
    {
      format: "episodes {bar} {value}/{total} | {eps} ep/s | ETA {eta_formatted}",
      hideCursor: true,
      clearOnComplete: true,
      stream: process.stderr,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  let first = 0;
  const t0 = performance.now();
  return {
    update(done, total) {
      if (!started) {
        bar.start(total, done, { eps: "0.0" });
        started = true;
        first = done;
      }
      const secs = (performance.now() - t0) / 1000;
      bar.update(done, { eps: secs > 0 ? ((done - first) / secs).toFixed(1) : "0.0" });
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
