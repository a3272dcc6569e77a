/**
 * Split-conformal thresholds for calibrated predicates. With n exchangeable benign scores
 * (larger = closer to unsafe) and a new episode's score S, flagging S above the k-th smallest
 * score, k = ⌈(n+1)(1−α)⌉, gives P(flag) ≤ (n+1−k)/(n+1) ≤ α over the draw of both: the
 * marginal bound. The realised false-positive rate of one such threshold is Beta(n+1−k, k)
 * distributed (continuous scores), so its upper quantile says how far one calibration can land
 * above α.
 */
import { logBinomialPmf } from "./special.js";
import { assertCount, assertOpenUnit } from "./validate.js";

/** The conformal rank k = ⌈(n+1)(1−α)⌉, or null when n is too small (k > n). */
export function conformalRank(n: number, alpha: number): number | null {
  assertCount("conformalRank", "n", n);
  assertOpenUnit("conformalRank", "alpha", alpha);
  const x = (n + 1) * (1 - alpha);
  // (n+1)(1−α) is an integer in exact arithmetic for many (n, α); floating error must not push
  // it past the integer (99.00000000000001 is rank 99).
  const k = Math.ceil(x - 1e-9 * Math.max(1, x));
  return k <= n ? Math.max(k, 1) : null;
}

/** The smallest n for which a rank exists: ⌈(1−α)/α⌉. */
export function minConformalN(alpha: number): number {
  assertOpenUnit("minConformalN", "alpha", alpha);
  let n = Math.max(1, Math.floor((1 - alpha) / alpha) - 1);
  while (conformalRank(n, alpha) === null) n++;
  return n;
}

/** The marginal bound on the false-positive rate: (n+1−k)/(n+1). */
export function conformalBound(n: number, k: number): number {
  return (n + 1 - k) / (n + 1);
}

/** CDF of Beta(a, b) at x for integer a, b ≥ 1: P(Binomial(a+b−1, x) ≥ a). */
export function betaCdfInteger(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const m = a + b - 1;
  let sum = 0;
  for (let j = a; j <= m; j++) sum += Math.exp(logBinomialPmf(j, m, x));
  return Math.min(1, sum);
}

/**
 * The q-quantile of the realised false-positive rate of a threshold at rank k of n scores:
 * the q-quantile of Beta(n+1−k, k), by bisection to 1e-15.
 */
export function conformalFprQuantile(n: number, k: number, q: number): number {
  assertOpenUnit("conformalFprQuantile", "q", q);
  const a = n + 1 - k;
  const b = k;
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < 200 && hi - lo > 1e-15; i++) {
    const mid = (lo + hi) / 2;
    if (betaCdfInteger(mid, a, b) < q) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}
