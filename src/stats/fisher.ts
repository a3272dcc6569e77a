import { logBinomialPmf } from "./special.js";
import { assertSuccesses, clampProbability } from "./validate.js";

/** A tail sum stops once the next term is this small relative to the sum so far. */
const NEGLIGIBLE = 1e-20;

/**
 * One-sided Fisher exact test of H1: the success rate of arm a exceeds that of arm b.
 *
 * Conditioning on the margins, the successes of arm a follow a hypergeometric law: draws
 * aN from a population of N = aN + bN with K = aSuccesses + bSuccesses successes, and the
 * p-value is P(X >= aSuccesses). It equals scipy's
 * `fisher_exact([[aS, aN − aS], [bS, bN − bS]], alternative="greater")`.
 *
 * Numerics: the probability at the starting count is computed in log space from binomial
 * saddle-point terms (ln P(X = x) = ln b(x; K, π) + ln b(aN − x; N − K, π) − ln b(aN; N, π) with
 * π = aN/N), so it keeps ~1e-14 relative accuracy at 10^7 per arm; the tail is then summed
 * outward with the exact term ratio, from whichever side of the mode keeps every term below the
 * first, and stops when a term is below 1e-20 of the sum. If the observed count lies above the
 * mode the upper tail is summed directly; otherwise the lower tail L = P(X < x) is summed and
 * p = 1 − L. Degenerate margins (an empty arm, no successes at all, or nothing but successes)
 * give p = 1, as scipy does.
 *
 * @example
 *   fisherExactGreater(8, 10, 2, 10); // ≈ 0.01151
 *   fisherExactGreater(2, 10, 8, 10); // ≈ 0.99945
 */
export function fisherExactGreater(
  aSuccesses: number,
  aN: number,
  bSuccesses: number,
  bN: number,
): number {
  assertSuccesses("fisherExactGreater", aSuccesses, aN, ["aSuccesses", "aN"]);
  assertSuccesses("fisherExactGreater", bSuccesses, bN, ["bSuccesses", "bN"]);
  const population = aN + bN;
  const marked = aSuccesses + bSuccesses;
  const draws = aN;
  const x = aSuccesses;
  const unmarked = population - marked;
  const lowest = Math.max(0, draws - unmarked);
  const highest = Math.min(draws, marked);
  if (x <= lowest) return 1;
  // Where P(X = k + 1) / P(X = k) crosses 1: the pmf rises up to `mode` and falls after it.
  const mode = Math.floor(((draws + 1) * (marked + 1)) / (population + 2));
  const logPmf = hypergeometricLogPmf(marked, unmarked, draws);

  if (x > mode) return clampProbability(Math.exp(logPmf(x) + Math.log(upperSum(x))));

  const lower = Math.exp(logPmf(x - 1) + Math.log(lowerSum(x - 1)));
  if (lower <= 0.5) return clampProbability(1 - lower);
  // A strongly skewed law put most mass below a point at or under the mode: sum the small side.
  let term = Math.exp(logPmf(x));
  let sum = term;
  for (let k = x; k < highest; k++) {
    term *= upRatio(k);
    sum += term;
    if (k >= mode && term < sum * NEGLIGIBLE) break;
  }
  return clampProbability(sum);

  /** Σ_{k >= from} P(X = k) / P(X = from); terms fall from the start since from > mode. */
  function upperSum(from: number): number {
    let term = 1;
    let sum = 1;
    for (let k = from; k < highest; k++) {
      term *= upRatio(k);
      sum += term;
      if (term < sum * NEGLIGIBLE) break;
    }
    return sum;
  }

  /** Σ_{k <= from} P(X = k) / P(X = from); terms fall from the start since from < mode. */
  function lowerSum(from: number): number {
    let term = 1;
    let sum = 1;
    for (let k = from; k > lowest; k--) {
      term *= (k * (unmarked - draws + k)) / ((marked - k + 1) * (draws - k + 1));
      sum += term;
      if (term < sum * NEGLIGIBLE) break;
    }
    return sum;
  }

  /** P(X = k + 1) / P(X = k). */
  function upRatio(k: number): number {
    return ((marked - k) * (draws - k)) / ((k + 1) * (unmarked - draws + k + 1));
  }
}

/**
 * ln P(X = x) for the hypergeometric law of successes among `draws` taken without replacement
 * from `marked` successes and `unmarked` failures, as a ratio of binomial probabilities at
 * π = draws / population (Loader's decomposition), so no large log-factorials cancel.
 */
function hypergeometricLogPmf(
  marked: number,
  unmarked: number,
  draws: number,
): (x: number) => number {
  const population = marked + unmarked;
  const p = draws / population;
  const q = (population - draws) / population;
  const logNormaliser = logBinomialPmf(draws, population, p, q);
  return (x) =>
    logBinomialPmf(x, marked, p, q) + logBinomialPmf(draws - x, unmarked, p, q) - logNormaliser;
}
