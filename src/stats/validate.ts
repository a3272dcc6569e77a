/**
 * Input checks shared by the statistics functions. Every check throws a RangeError naming the
 * function and the argument, so a bad count never turns silently into a NaN in a report.
 * @internal
 */

/** Throws unless `value` is a non-negative safe integer. */
export function assertCount(fn: string, name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${fn}: ${name} must be a non-negative integer, got ${String(value)}`);
  }
}

/** Throws unless both are counts and `successes <= n`. */
export function assertSuccesses(
  fn: string,
  successes: number,
  n: number,
  names: readonly [string, string] = ["successes", "n"],
): void {
  assertCount(fn, names[0], successes);
  assertCount(fn, names[1], n);
  if (successes > n) {
    throw new RangeError(`${fn}: ${names[0]} (${successes}) must not exceed ${names[1]} (${n})`);
  }
}

/** Throws unless `value` lies strictly between 0 and 1 (a confidence level or an alpha). */
export function assertOpenUnit(fn: string, name: string, value: number): void {
  if (!(value > 0 && value < 1)) {
    throw new RangeError(`${fn}: ${name} must lie strictly between 0 and 1, got ${String(value)}`);
  }
}

/** Throws unless every entry is a p-value: a finite number in [0, 1]. */
export function assertPValues(fn: string, ps: readonly number[]): void {
  ps.forEach((p, i) => {
    if (!(p >= 0 && p <= 1)) {
      throw new RangeError(`${fn}: p-value at index ${i} must lie in [0, 1], got ${String(p)}`);
    }
  });
}

/** Rounding can push a computed probability a hair outside [0, 1]; this puts it back. */
export function clampProbability(p: number): number {
  return Math.min(1, Math.max(0, p));
}
