import { logBeta } from "./special.js";
import type { Interval } from "./types.js";
import { assertOpenUnit, assertSuccesses } from "./validate.js";

/**
 * Options of {@link anytimeInterval}.
 *
 * @example
 *   const options: AnytimeOptions = { alpha: 0.01 };
 */
export interface AnytimeOptions {
  /** Error probability over the whole sequence of looks, in (0, 1); default 0.05. */
  alpha?: number;
}

/** Root finding stops once the step or the bracket is this small relative to the endpoint. */
const RELATIVE_TOLERANCE = 1e-15;
/** Far more than needed: Newton converges in under ten steps, bisection in under 1100. */
const MAX_ITERATIONS = 1100;

/**
 * ln M_n(p), the log of Robbins' Beta(1, 1)-mixture martingale for a Bernoulli rate:
 * M_n(p) = ∫₀¹ q^s (1 − q)^(n−s) dq / (p^s (1 − p)^(n−s)) = B(s + 1, n − s + 1) / (p^s (1 − p)^(n−s)).
 *
 * @example
 *   anytimeLogMartingale(0.5, 5, 10); // ln(B(6, 6) / 0.5^10) ≈ -0.9959
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
 * interval containing p̂. Each endpoint is bracketed using Pinsker's inequality and then found by
 * Newton steps from the outside, safeguarded by bisection, to 1e-15 relative (far below the 1e-12
 * we promise); the outside end is returned, so rounding can only widen the interval. s = 0 gives
 * low = 0, s = n gives high = 1, and n = 0 gives [0, 1].
 *
 * @example
 *   anytimeInterval(30, 100); // { low: ≈0.1694, high: ≈0.4572 }, wider than Wilson's [0.219, 0.396]
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
  const slope = (p: number): number =>
    (successes === 0 ? 0 : -successes / p) + (failures === 0 ? 0 : failures / (1 - p));
  const pHat = successes / n;
  // ln M(p) − ln M(p̂) = n KL(p̂ ‖ p) >= 2n (p − p̂)² (Pinsker), so each end lies within this of p̂.
  const reach = Math.sqrt(-excess(pHat) / (2 * n));
  return {
    low: successes === 0 ? 0 : boundary(excess, slope, pHat, Math.max(0, pHat - reach), 0),
    high: successes === n ? 1 : boundary(excess, slope, pHat, Math.min(1, pHat + reach), 1),
  };
}

/**
 * Finds where `excess` (convex, negative at `inside`) crosses zero between `inside` and `limit`.
 * `start` is a point at or beyond the crossing; Newton steps taken from the outside of a convex
 * function approach the root without passing it, so the outer end closes in quadratically while
 * any step that leaves the bracket falls back to bisection. Returns the final outer end, at which
 * excess >= 0, so rounding can only widen the interval.
 */
function boundary(
  excess: (p: number) => number,
  slope: (p: number) => number,
  inside: number,
  start: number,
  limit: number,
): number {
  let inner = inside;
  let outer = start;
  let outerExcess = excess(start);
  if (!(outerExcess >= 0)) {
    // Only rounding can put the Pinsker point inside; then search the whole remaining range.
    inner = start;
    outer = limit;
    outerExcess = excess(limit);
  }
  for (let i = 0; i < MAX_ITERATIONS; i++) {
    const newton = Number.isFinite(outerExcess) ? outer - outerExcess / slope(outer) : Number.NaN;
    const between = (newton - inner) * (newton - outer) < 0;
    const next = between ? newton : 0.5 * (inner + outer);
    if (next === inner || next === outer) break;
    const nextExcess = excess(next);
    const step = Math.abs(next - outer);
    if (nextExcess < 0) {
      inner = next;
    } else {
      outer = next;
      outerExcess = nextExcess;
      if (step <= RELATIVE_TOLERANCE * Math.abs(outer)) break;
    }
    if (
      Math.abs(outer - inner) <=
      RELATIVE_TOLERANCE * Math.max(Math.abs(inner), Math.abs(outer))
    ) {
      break;
    }
  }
  return outer;
}
