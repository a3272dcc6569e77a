import { anytimeInterval } from "./anytime.js";
import { assertOpenUnit, assertSuccesses } from "./validate.js";
import { wilsonInterval } from "./wilson.js";

/**
 * A Wilson score interval as stored in a report.
 *
 * @example
 *   const ci: WilsonRateInterval = { method: "wilson", confidence: 0.95, low: 0.11, high: 0.6 };
 */
export interface WilsonRateInterval {
  method: "wilson";
  confidence: number;
  low: number;
  high: number;
}

/**
 * An anytime-valid (Beta(1, 1)-mixture) interval as stored in a report.
 *
 * @example
 *   const cs: AnytimeRateInterval = { method: "beta-binomial-mixture", alpha: 0.05, low: 0.04, high: 0.73 };
 */
export interface AnytimeRateInterval {
  method: "beta-binomial-mixture";
  alpha: number;
  low: number;
  high: number;
}

/**
 * A cluster bootstrap interval as stored beside a pooled rate (see `clusterBootstrapInterval`):
 * tasks resampled whole for episode rates, episodes resampled whole for step rates; `clusters`
 * counts the clusters with at least one judged unit.
 *
 * @example
 *   const ci: ClusteredRateInterval = {
 *     method: "task-cluster-bootstrap", confidence: 0.95, resamples: 2000, clusters: 4, low: 0.2, high: 0.5,
 *   };
 */
export interface ClusteredRateInterval {
  /** What is resampled: whole tasks (episode rates) or whole episodes (step rates). */
  method: "task-cluster-bootstrap" | "episode-cluster-bootstrap";
  confidence: number;
  resamples: number;
  clusters: number;
  low: number;
  high: number;
}

/**
 * The report's RATE object. `rate` and the intervals are null when n = 0: no episodes means no
 * estimate, which is not the same as a rate of 0. `anytime` is present only when asked for.
 *
 * @example
 *   const empty: Rate = { successes: 0, n: 0, rate: null, interval: null };
 */
export interface Rate {
  successes: number;
  n: number;
  rate: number | null;
  interval: WilsonRateInterval | null;
  anytime?: AnytimeRateInterval | null;
  /** Added by the report to pooled rates; {@link rate} never sets it. */
  clustered?: ClusteredRateInterval | null;
  /** Why `clustered` is null (too few clusters, or no spread between them). */
  clustered_reason?: string;
}

/**
 * Options of {@link rate}.
 *
 * @example
 *   const options: RateOptions = { confidence: 0.95, anytime: true, alpha: 0.05 };
 */
export interface RateOptions {
  /** Confidence level of the Wilson interval; default 0.95. */
  confidence?: number;
  /** Include the anytime-valid interval; default false. */
  anytime?: boolean;
  /** Alpha of the anytime-valid interval; default 0.05. */
  alpha?: number;
}

/**
 * Builds a report RATE: the counts, the point estimate s/n, its Wilson interval and, with
 * `{ anytime: true }`, Robbins' anytime-valid interval. n = 0 gives nulls, never 0.
 *
 * @example
 *   rate(3, 10, { anytime: true });
 *   // { successes: 3, n: 10, rate: 0.3,
 *   //   interval: { method: "wilson", confidence: 0.95, low: ≈0.1078, high: ≈0.6032 },
 *   //   anytime: { method: "beta-binomial-mixture", alpha: 0.05, low: ≈0.0366, high: ≈0.7333 } }
 *   rate(0, 0); // { successes: 0, n: 0, rate: null, interval: null }
 */
export function rate(successes: number, n: number, options: RateOptions = {}): Rate {
  const confidence = options.confidence ?? 0.95;
  const alpha = options.alpha ?? 0.05;
  assertSuccesses("rate", successes, n);
  assertOpenUnit("rate", "confidence", confidence);
  assertOpenUnit("rate", "alpha", alpha);
  const empty = n === 0;
  const out: Rate = {
    successes,
    n,
    rate: empty ? null : successes / n,
    interval: empty
      ? null
      : { method: "wilson", confidence, ...wilsonInterval(successes, n, { confidence }) },
  };
  if (options.anytime === true) {
    out.anytime = empty
      ? null
      : { method: "beta-binomial-mixture", alpha, ...anytimeInterval(successes, n, { alpha }) };
  }
  return out;
}
