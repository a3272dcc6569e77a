// Timings of the statistics module on the built package: `npm run build && node bench/stats.bench.mjs`.
// Each figure is the median of several repetitions after a warm-up, in milliseconds per call.
import {
  anytimeInterval,
  benjaminiHochberg,
  clusterBootstrapInterval,
  fisherExactGreater,
  mcnemarExact,
  wilsonInterval,
} from "../dist/stats/index.js";

/** Median wall time of `fn` over `reps` runs, after `warmup` untimed runs. */
function medianMs(fn, reps = 21, warmup = 3) {
  for (let i = 0; i < warmup; i++) fn();
  const times = [];
  for (let i = 0; i < reps; i++) {
    const start = process.hrtime.bigint();
    fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

/** Prints one line; `batch` calls per timed run give the per-call figure for fast functions. */
function report(label, fn, batch = 1) {
  const ms = medianMs(() => {
    for (let i = 0; i < batch; i++) fn();
  });
  const perCall = ms / batch;
  console.log(
    `stats: ${label}: ${perCall < 0.01 ? perCall.toExponential(2) : perCall.toFixed(3)} ms`,
  );
}

// Observed counts near the mode are the slow case: the tail sum runs over ~10 standard deviations.
report("fisherExactGreater n=1e5 per arm", () => fisherExactGreater(30_200, 1e5, 30_000, 1e5), 100);
report("fisherExactGreater n=1e7 per arm", () =>
  fisherExactGreater(3_001_000, 1e7, 3_000_000, 1e7),
);

const clusters = Array.from({ length: 20 }, (_, i) => ({ successes: (i * 7) % 23, n: 23 + i }));
report("clusterBootstrapInterval 2000 resamples x 20 clusters", () =>
  clusterBootstrapInterval(clusters, { seed: "bench", resamples: 2000 }),
);

report("wilsonInterval", () => wilsonInterval(123, 1000), 10_000);
report("anytimeInterval n=1e3", () => anytimeInterval(123, 1000), 1_000);
report("anytimeInterval n=1e7", () => anytimeInterval(3_000_000, 1e7), 1_000);
report("mcnemarExact b+c=1e6", () => mcnemarExact(499_000, 501_000), 10);
const ps = Array.from({ length: 100 }, (_, i) => ((i * 37) % 101) / 101);
report("benjaminiHochberg 100 p-values", () => benjaminiHochberg(ps), 1_000);
