import type { Interval } from "./types.js";
import { assertOpenUnit } from "./validate.js";
import { wilsonInterval } from "./wilson.js";

/**
 * A paired 2x2 table of one binary outcome under two conditions on the same units:
 * `both` (positive under both), `first` (positive only under the first), `second` (only under
 * the second), `neither`.
 */
export interface PairedTable {
  both: number;
  first: number;
  second: number;
  neither: number;
}

/**
 * Newcombe's hybrid score interval for the difference of two paired proportions, p₁ − p₂
 * (Newcombe 1998, Statistics in Medicine 17:2635, method 10: no continuity correction). From the
 * Wilson limits (l₁, u₁) of p₁ = (both + first)/n and (l₂, u₂) of p₂ = (both + second)/n and the
 * phi coefficient of the table (0 when a margin is empty):
 *
 *   low  = θ − √((p₁ − l₁)² − 2φ (p₁ − l₁)(u₂ − p₂) + (u₂ − p₂)²),
 *   high = θ + √((u₁ − p₁)² − 2φ (u₁ − p₁)(p₂ − l₂) + (p₂ − l₂)²).
 *
 * n = 0 gives the uninformative [−1, 1]. The golden cases (test/golden/mitigation) come from an
 * independent Python implementation over statsmodels' Wilson limits.
 *
 * @example
 *   newcombePairedDifference({ both: 2, first: 8, second: 1, neither: 9 }); // θ = 0.35
 */
export function newcombePairedDifference(
  t: PairedTable,
  options: { confidence?: number } = {},
): Interval & { estimate: number | null } {
  const confidence = options.confidence ?? 0.95;
  assertOpenUnit("newcombePairedDifference", "confidence", confidence);
  for (const [k, v] of Object.entries(t)) {
    if (!Number.isInteger(v) || v < 0)
      throw new RangeError(
        `newcombePairedDifference: ${k} must be a non-negative integer, got ${v}`,
      );
  }
  const n = t.both + t.first + t.second + t.neither;
  if (n === 0) return { estimate: null, low: -1, high: 1 };
  const s1 = t.both + t.first;
  const s2 = t.both + t.second;
  const p1 = s1 / n;
  const p2 = s2 / n;
  const w1 = wilsonInterval(s1, n, { confidence });
  const w2 = wilsonInterval(s2, n, { confidence });
  const margins =
    (t.both + t.first) * (t.second + t.neither) * (t.both + t.second) * (t.first + t.neither);
  const phi = margins === 0 ? 0 : (t.both * t.neither - t.first * t.second) / Math.sqrt(margins);
  const theta = p1 - p2;
  const dl = Math.sqrt(
    Math.max(
      0,
      (p1 - w1.low) ** 2 - 2 * phi * (p1 - w1.low) * (w2.high - p2) + (w2.high - p2) ** 2,
    ),
  );
  const du = Math.sqrt(
    Math.max(
      0,
      (w1.high - p1) ** 2 - 2 * phi * (w1.high - p1) * (p2 - w2.low) + (p2 - w2.low) ** 2,
    ),
  );
  return { estimate: theta, low: Math.max(-1, theta - dl), high: Math.min(1, theta + du) };
}
