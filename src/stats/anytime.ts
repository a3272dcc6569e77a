import { logBeta } from "./special.js";
import type { Interval } from "./types.js";
import { assertOpenUnit, assertSuccesses } from "./validate.js";

/** Options of {@link anytimeInterval}. */
export interface AnytimeOptions {
  /** Error probability over the whole sequence of looks, in (0, 1); default 0.05. */
  alpha?: number;
}

/** Bisection stops once the bracket is this wide relative to the endpoint (or absolutely). */
const RELATIVE_TOLERANCE = 1e-15;
const ABSOLUTE_TOLERANCE = 1e-300;
/** Enough halvings to go from [0, 1] to any double above 1e-300 at 1e-15 relative width. */
const MAX_ITERATIONS = 1100;

/**
 * ln M_n(p), the log of Robbins' Beta(1, 1)-mixture martingale for a Bernoulli rate:
 * M_n(p) = ∫₀¹ q^s (1 − q)^(n−s) dq / (p^s (1 − p)^(n−s)) = B(s + 1, n − s + 1) / (p^s (1 − p)^(n−s)).
 *
 * @example
 *   anytimeLogMartingale(0.5, 5, 10); // ln(B(6, 6) / 0.5^10) ≈ -0.9927
 */
export function anytimeLogMartingale(p: number, successes: number, n: number): number {
  assertSuccesses("anytimeLogMartingale", successes, n);
  if (!(p >= 0 && p <= 1)) {
    throw new RangeError(`anytimeLogMartingale: p must lie in [0, 1], got ${String(p)}`);
  }
  if (n === 0) return 0;
  const failures = n - successes;
  // 0 · ln 0 counts as 0: a parameter at the edge is fully consistent with an all-one outcome.
  const fromSuccesses = successes === 0 ? 0 : successes * Math.log(p);
  const fromFailures = failures === 0 ? 0 : failures * Math.log1p(-p);
  return logBeta(successes + 1, failures + 1) - fromSuccesses - fromFailures;
}

/**
 * Anytime-valid confidence interval for a Bernoulli rate: Robbins' (1970) Beta(1, 1)-mixture
 * confidence sequence. It is the set of p whose mixture martingale stays below 1/α,
 *
 *   { p : B(s + 1, n − s + 1) / (p^s (1 − p)^(n−s)) < 1/α },
 *
 * and by Ville's inequality the true rate lies in *every* interval of the sequence n = 1, 2, …
 * with probability at least 1 − α, so a reader may watch the interval and stop whenever they like.
 * The martingale is convex in ln-space with its minimum (at most 1) at p̂ = s/n, so the set is an
 * interval containing p̂; each endpoint is found by bisection to 1e-15 relative width (far below
 * the 1e-12 we promise) and the outer end of the final bracket is returned, so rounding can only
 * widen the interval. s = 0 gives low = 0, s = n gives high = 1, and n = 0 gives [0, 1].
 *
 * @example
 *   anytimeInterval(30, 100); // { low: ≈0.196, high: ≈0.425 }, wider than Wilson's [0.219, 0.396]
 *   anytimeInterval(0, 0); // { low: 0, high: 1 }
 */
export function anytimeInterval(
  successes: number,
  n: number,
  options: AnytimeOptions = {},
): Interval {
  const alpha = options.alpha ?? 0.05;
  assertSuccesses("anytimeInterval", successes, n);
  assertOpenUnit("anytimeInterval", "alpha", alpha);
  if (n === 0) return { low: 0, high: 1 };
  const threshold = -Math.log(alpha);
  const failures = n - successes;
  const logB = logBeta(successes + 1, failures + 1);
  // Same as anytimeLogMartingale without re-validating inside the root finder's loop.
  const excess = (p: number): number =>
    logB -
    (successes === 0 ? 0 : successes * Math.log(p)) -
    (failures === 0 ? 0 : failures * Math.log1p(-p)) -
    threshold;
  const pHat = successes / n;
  return {
    low: successes === 0 ? 0 : boundary(excess, pHat, 0),
    high: successes === n ? 1 : boundary(excess, pHat, 1),
  };
}

/**
 * Bisection for the point where `excess` changes sign between `inside` (excess < 0) and
 * `outside` (excess >= 0); returns the final outside end.
 */
function boundary(excess: (p: number) => number, inside: number, outside: number): number {
  let inner = inside;
  let outer = outside;
  for (let i = 0; i < MAX_ITERATIONS; i++) {
    const width = Math.abs(outer - inner);
    if (width <= RELATIVE_TOLERANCE * Math.max(inner, outer) || width <= ABSOLUTE_TOLERANCE) break;
    const mid = 0.5 * (inner + outer);
    if (mid === inner || mid === outer) break;
    if (excess(mid) < 0) inner = mid;
    else outer = mid;
  }
  return outer;
}
