import { logBinomialPmf } from "./special.js";
import { assertCount, clampProbability } from "./validate.js";

/**
 * P(X <= m) for X ~ Binomial(n, ½) with 0 <= m < n / 2, summed downward from m in log space.
 * Terms fall going down from m because m < n/2; each is the previous times k / (n − k + 1).
 */
function lowerHalfTail(m: number, n: number): number {
  let term = 1;
  let sum = 1;
  for (let k = m; k > 0; k--) {
    term *= k / (n - k + 1);
    sum += term;
    if (term < sum * 1e-20) break;
  }
  return Math.exp(logBinomialPmf(m, n, 0.5, 0.5) + Math.log(sum));
}

/**
 * Two-sided exact McNemar test on the discordant counts of paired outcomes: `b` pairs where only
 * the first condition succeeded, `c` where only the second did. Under H0 each discordant pair is a
 * fair coin, so with m = min(b, c) and X ~ Binomial(b + c, ½) the p-value is
 * min(1, 2 P(X <= m)); b + c = 0 gives 1. This is statsmodels' `mcnemar(table, exact=True)`.
 * Two-sided: a large `c` (the first condition *safer*) is as significant as a large `b`. The
 * report keeps it for reference only; its primary test is {@link mcnemarExactGreater}.
 * The tail is summed downward from m in log space, so b + c of 10^7 and more is fine.
 *
 * @example
 *   mcnemarExact(1, 9); // 2 · 11/1024 ≈ 0.02148
 *   mcnemarExact(0, 0); // 1
 */
export function mcnemarExact(b: number, c: number): number {
  assertCount("mcnemarExact", "b", b);
  assertCount("mcnemarExact", "c", c);
  const n = b + c;
  const m = Math.min(b, c);
  if (n === 0 || 2 * m >= n) return 1;
  return clampProbability(2 * lowerHalfTail(m, n));
}

/**
 * One-sided exact McNemar (sign) test that the first condition succeeds *more often* than the
 * second on paired outcomes: with `b` pairs where only the first succeeded and `c` where only the
 * second did, the p-value is P(X >= b) for X ~ Binomial(b + c, ½); b + c = 0 gives 1. Only the
 * discordant pairs enter, so it stays valid when pairs differ in difficulty (task heterogeneity).
 * This is scipy's `binomtest(b, b + c, 0.5, alternative="greater").pvalue`.
 *
 * By symmetry P(X >= b) = P(X <= c); when c is at least half of b + c the complement
 * 1 − P(X <= b − 1) is summed instead, so the short tail is always the one summed.
 *
 * @example
 *   mcnemarExactGreater(9, 1); // 11/1024 ≈ 0.01074 (the first condition more often)
 *   mcnemarExactGreater(1, 9); // 1023/1024 ≈ 0.99902 (it was less often: no evidence of more)
 *   mcnemarExactGreater(0, 0); // 1
 */
export function mcnemarExactGreater(b: number, c: number): number {
  assertCount("mcnemarExactGreater", "b", b);
  assertCount("mcnemarExactGreater", "c", c);
  const n = b + c;
  if (n === 0 || b === 0) return 1;
  if (2 * c < n) return clampProbability(lowerHalfTail(c, n));
  // P(X <= c) = 1 − P(X >= c + 1) = 1 − P(X <= b − 1), and b − 1 < n / 2 here.
  return clampProbability(1 - lowerHalfTail(b - 1, n));
}
