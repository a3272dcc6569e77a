// Reads that must succeed. The probes index fixed-size vectors (an anchor's (x, y), a state
// vector, a body's position) and look up tasks they just listed: a miss there is a bug in the
// probe, so it throws and names what was missing rather than turning a figure into NaN.

/**
 * The element at `i` of `a`.
 * @template T
 * @param {ArrayLike<T>} a
 * @param {number} i
 * @returns {T}
 */
export function at(a, i) {
  const v = a[i];
  if (v === undefined) throw new RangeError(`index ${i} is outside a vector of ${a.length}`);
  return v;
}

/**
 * `value`, which is there by construction.
 * @template T
 * @param {T | undefined} value
 * @param {string} what what was looked up, for the error
 * @returns {T}
 */
export function defined(value, what) {
  if (value === undefined) throw new Error(`no ${what}`);
  return value;
}

/**
 * A position's first two coordinates, the table plane.
 * @param {ArrayLike<number>} v
 * @returns {[number, number]}
 */
export function xy(v) {
  return [at(v, 0), at(v, 1)];
}
