import { ascendingOrder } from "./benjamini-hochberg.js";
import { assertPValues } from "./validate.js";

/**
 * Holm's step-down adjusted p-values, controlling the family-wise error rate, returned in input
 * order. With p₍₁₎ <= … <= p₍ₘ₎ sorted ascending,
 *
 *   adj₍ᵢ₎ = min(1, max over j <= i of (m − j + 1) · p₍ⱼ₎),
 *
 * so the adjustment is monotone in p, never below p, and tied p-values get tied values. Matches
 * statsmodels `multipletests(ps, method="holm")[1]`. Empty in, empty out; anything that is not a
 * number in [0, 1] throws a RangeError.
 *
 * @example
 *   holm([0.01, 0.04, 0.03]); // [0.03, 0.06, 0.06]
 */
export function holm(ps: readonly number[]): number[] {
  assertPValues("holm", ps);
  const m = ps.length;
  const order = ascendingOrder(ps);
  const adjusted = new Array<number>(m);
  let running = 0;
  for (let rank = 1; rank <= m; rank++) {
    const index = order[rank - 1] as number;
    running = Math.min(1, Math.max(running, (m - rank + 1) * (ps[index] as number)));
    adjusted[index] = running;
  }
  return adjusted;
}
