import { normalQuantile } from "./normal.js";
import type { Interval } from "./types.js";
import { assertOpenUnit, assertSuccesses } from "./validate.js";

export { normalQuantile } from "./normal.js";
export type { Interval } from "./types.js";

/**
 * Options of {@link wilsonInterval}.
 *
 * @example
 *   const options: WilsonOptions = { confidence: 0.9 };
 */
export interface WilsonOptions {
  /** Two-sided confidence level in (0, 1); default 0.95. */
  confidence?: number;
}

/**
 * Wilson score interval for a binomial proportion (Wilson, 1927): the set of p whose score test
 * does not reject at level 1 − confidence. With z = Φ⁻¹(1 − α/2), p̂ = s/n:
 *
 *   centre = (p̂ + z²/2n) / (1 + z²/n),
 *   half   = z √(p̂(1 − p̂)/n + z²/4n²) / (1 + z²/n),
 *
 * and the interval is [centre − half, centre + half], clamped to [0, 1] (exactly 0 at s = 0 and
 * exactly 1 at s = n). n = 0 gives the uninformative [0, 1]. Matches statsmodels
 * `proportion_confint(method="wilson")`.
 *
 * @example
 *   wilsonInterval(7, 20); // { low: ≈0.1812, high: ≈0.5671 }
 *   wilsonInterval(0, 0); // { low: 0, high: 1 }
 */
export function wilsonInterval(
  successes: number,
  n: number,
  options: WilsonOptions = {},
): Interval {
  const confidence = options.confidence ?? 0.95;
  assertSuccesses("wilsonInterval", successes, n);
  assertOpenUnit("wilsonInterval", "confidence", confidence);
  if (n === 0) return { low: 0, high: 1 };
  // −Φ⁻¹(α/2) rather than Φ⁻¹(1 − α/2): the lower tail keeps every digit of a small α.
  const z = -normalQuantile((1 - confidence) / 2);
  const p = successes / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  return {
    low: successes === 0 ? 0 : Math.min(p, Math.max(0, centre - half)),
    high: successes === n ? 1 : Math.max(p, Math.min(1, centre + half)),
  };
}
