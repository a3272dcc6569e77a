import { logBinomialPmf } from "./special.js";
import { assertCount, clampProbability } from "./validate.js";

/**
 * Two-sided exact McNemar test on the discordant counts of paired outcomes: `b` pairs where only
 * the first condition succeeded, `c` where only the second did. Under H0 each discordant pair is a
 * fair coin, so with m = min(b, c) and X ~ Binomial(b + c, ½) the p-value is
 * min(1, 2 P(X <= m)); b + c = 0 gives 1. This is statsmodels' `mcnemar(table, exact=True)`.
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
  // Terms fall going down from m because m < n/2; each is the previous times k / (n − k + 1).
  let term = 1;
  let sum = 1;
  for (let k = m; k > 0; k--) {
    term *= k / (n - k + 1);
    sum += term;
    if (term < sum * 1e-20) break;
  }
  const tail = Math.exp(logBinomialPmf(m, n, 0.5, 0.5) + Math.log(sum));
  return clampProbability(2 * tail);
}
