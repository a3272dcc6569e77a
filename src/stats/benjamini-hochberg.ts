import { assertPValues } from "./validate.js";

/**
 * Benjamini-Hochberg adjusted p-values (q-values) controlling the false discovery rate, returned
 * in input order. With p₍₁₎ <= … <= p₍ₘ₎ sorted ascending,
 *
 *   q₍ᵢ₎ = min over j >= i of min(1, m · p₍ⱼ₎ / j),
 *
 * so q is monotone in p, q >= p, and tied p-values get tied q-values. Matches statsmodels
 * `multipletests(ps, method="fdr_bh")[1]`. An empty list gives an empty list; anything that is not
 * a number in [0, 1] throws a RangeError.
 *
 * @example
 *   benjaminiHochberg([0.01, 0.04, 0.03]); // [0.03 (to rounding), 0.04, 0.04]
 */
export function benjaminiHochberg(ps: readonly number[]): number[] {
  assertPValues("benjaminiHochberg", ps);
  const m = ps.length;
  const order = ascendingOrder(ps);
  const qs = new Array<number>(m);
  let running = 1;
  for (let rank = m; rank >= 1; rank--) {
    const index = order[rank - 1] as number;
    // p / (rank / m) as statsmodels does; since rank / m <= 1 the rounded q is never below p.
    running = Math.min(running, (ps[index] as number) / (rank / m));
    qs[index] = running;
  }
  return qs;
}

/** Indices of `values` sorted by value, ties in input order (the adjustment ignores tie order). */
export function ascendingOrder(values: readonly number[]): number[] {
  return values
    .map((_, i) => i)
    .sort((i, j) => (values[i] as number) - (values[j] as number) || i - j);
}
