/**
 * A closed interval on a probability, `low <= high`, both in [0, 1].
 *
 * @example
 *   const ci: Interval = { low: 0.12, high: 0.31 };
 */
export interface Interval {
  low: number;
  high: number;
}
