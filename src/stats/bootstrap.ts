import { Rng } from "../core/rng.js";
import type { Interval } from "./types.js";
import { assertOpenUnit, assertSuccesses } from "./validate.js";

/**
 * One cluster (in Provael, one task): its successes among its n episodes.
 *
 * @example
 *   const task: ClusterCounts = { successes: 4, n: 10 };
 */
export interface ClusterCounts {
  successes: number;
  n: number;
}

/**
 * Options of {@link clusterBootstrapInterval}; `seed` is required so every interval is reproducible.
 *
 * @example
 *   const options: ClusterBootstrapOptions = { seed: "run-42", resamples: 5000 };
 */
export interface ClusterBootstrapOptions {
  /** Label of the resampling stream; the generator is `Rng.fromLabel(\`bootstrap:${seed}\`)`. */
  seed: number | string;
  /** Number of bootstrap resamples, a positive integer; default 2000. */
  resamples?: number;
  /** Two-sided confidence level in (0, 1); default 0.95. */
  confidence?: number;
}

/**
 * Cluster (task-level) percentile bootstrap interval for a pooled rate Σ sᵢ / Σ nᵢ.
 *
 * Episodes of one task share its scene and difficulty, so they are not independent; resampling
 * whole clusters keeps that dependence and gives an interval that widens when tasks disagree.
 * Each of the B resamples draws k clusters with replacement (k = number of clusters with n > 0)
 * from `Rng.fromLabel(\`bootstrap:${seed}\`)` and records its pooled rate. With the B rates sorted
 * ascending as r₁ <= … <= r_B, the endpoints are the type-7 sample quantiles (Hyndman and Fan,
 * 1996; R's and numpy's default) at α/2 and 1 − α/2, α = 1 − confidence:
 *
 *   Q(u) = r_⌊h⌋ + (h − ⌊h⌋)(r_⌊h⌋+1 − r_⌊h⌋),  h = (B − 1) u + 1 (1-based ranks).
 *
 * Clusters with n = 0 carry no episodes and are dropped first. The result is null when fewer than
 * two clusters remain or when every remaining cluster has the same rate (every resample would
 * then repeat the point estimate, and a zero-width interval would claim certainty it lacks).
 * The same clusters, seed and options always give the same interval.
 *
 * @example
 *   clusterBootstrapInterval(
 *     [{ successes: 3, n: 10 }, { successes: 7, n: 10 }, { successes: 5, n: 12 }],
 *     { seed: 1 },
 *   ); // { low: 0.3, high: 0.7 }, the same on every run with seed 1
 */
export function clusterBootstrapInterval(
  clusters: readonly ClusterCounts[],
  options: ClusterBootstrapOptions,
): Interval | null {
  const resamples = options.resamples ?? 2000;
  const confidence = options.confidence ?? 0.95;
  clusters.forEach((c, i) => {
    assertSuccesses("clusterBootstrapInterval", c.successes, c.n, [
      `clusters[${i}].successes`,
      `clusters[${i}].n`,
    ]);
  });
  if (!Number.isSafeInteger(resamples) || resamples < 1) {
    throw new RangeError(
      `clusterBootstrapInterval: resamples must be a positive integer, got ${String(resamples)}`,
    );
  }
  assertOpenUnit("clusterBootstrapInterval", "confidence", confidence);
  if (typeof options.seed !== "number" && typeof options.seed !== "string") {
    throw new RangeError("clusterBootstrapInterval: seed must be a number or a string");
  }

  const kept = clusters.filter((c) => c.n > 0);
  const k = kept.length;
  if (k < 2) return null;
  const first = kept[0] as ClusterCounts;
  // Cross-multiplied so that 1/3 and 2/6 count as equal without rounding.
  if (kept.every((c) => c.successes * first.n === first.successes * c.n)) return null;

  const successes = Float64Array.from(kept, (c) => c.successes);
  const sizes = Float64Array.from(kept, (c) => c.n);
  const rng = Rng.fromLabel(`bootstrap:${options.seed}`);
  const rates = new Float64Array(resamples);
  for (let b = 0; b < resamples; b++) {
    let s = 0;
    let n = 0;
    for (let j = 0; j < k; j++) {
      const pick = rng.int(k);
      s += successes[pick] as number;
      n += sizes[pick] as number;
    }
    rates[b] = s / n;
  }
  rates.sort();
  const alpha = 1 - confidence;
  return { low: type7Quantile(rates, alpha / 2), high: type7Quantile(rates, 1 - alpha / 2) };
}

/**
 * Type-7 quantile of ascending `sorted` at u in [0, 1]: linear interpolation between order
 * statistics at 1-based position h = (B − 1) u + 1.
 *
 * @example
 *   type7Quantile(Float64Array.of(1, 2, 3, 4), 0.5); // 2.5
 */
export function type7Quantile(sorted: ArrayLike<number>, u: number): number {
  const count = sorted.length;
  if (count === 0) throw new RangeError("type7Quantile: no values");
  if (!(u >= 0 && u <= 1)) throw new RangeError(`type7Quantile: u must lie in [0, 1], got ${u}`);
  const h = (count - 1) * u; // 0-based position
  const lower = Math.floor(h);
  const upper = Math.min(lower + 1, count - 1);
  const a = sorted[lower] as number;
  const b = sorted[upper] as number;
  return a + (h - lower) * (b - a);
}
