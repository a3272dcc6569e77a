/** Rational approximations of AS 241 for the central region |p − ½| <= 0.425 (r = 0.180625 − q²). */
const CENTRAL_NUM = [
  3.3871328727963665, 133.14166789178438, 1971.5909503065513, 13731.69376550946, 45921.95393154987,
  67265.7709270087, 33430.57558358813, 2509.0809287301227,
];
const CENTRAL_DEN = [
  1, 42.31333070160091, 687.1870074920579, 5394.196021424751, 21213.794301586597, 39307.89580009271,
  28729.085735721943, 5226.495278852854,
];
/** Intermediate tail, r = sqrt(−ln min(p, 1 − p)) − 1.6 for r <= 5. */
const NEAR_NUM = [
  1.4234371107496835, 4.630337846156546, 5.769497221460691, 3.6478483247632045, 1.2704582524523684,
  0.2417807251774506, 0.022723844989269184, 0.0007745450142783414,
];
const NEAR_DEN = [
  1, 2.053191626637759, 1.6763848301838038, 0.6897673349851, 0.14810397642748008,
  0.015198666563616457, 0.0005475938084995345, 1.0507500716444169e-9,
];
/** Far tail, r = sqrt(−ln min(p, 1 − p)) − 5. */
const FAR_NUM = [
  6.657904643501103, 5.463784911164114, 1.7848265399172913, 0.29656057182850487,
  0.026532189526576124, 0.0012426609473880784, 2.7115555687434876e-5, 2.0103343992922881e-7,
];
const FAR_DEN = [
  1, 0.599832206555888, 0.1369298809227358, 0.014875361290850615, 0.0007868691311456133,
  1.8463183175100548e-5, 1.421511758316446e-7, 2.0442631033899397e-15,
];

/** Evaluates c[0] + c[1] x + … + c[7] x^7 by Horner's rule. */
function poly(c: readonly number[], x: number): number {
  let acc = 0;
  for (let i = c.length - 1; i >= 0; i--) acc = acc * x + (c[i] as number);
  return acc;
}

/**
 * Inverse of the standard normal CDF, Φ⁻¹(p), by Wichura's algorithm AS 241 (PPND16, Applied
 * Statistics 37, 1988), whose rational approximations are accurate to about 1e-16 relative.
 * p = 0 gives −∞ and p = 1 gives +∞; anything outside [0, 1] or NaN throws a RangeError.
 *
 * @example
 *   normalQuantile(0.975); // ≈ 1.959963984540054
 *   normalQuantile(0.5); // 0
 */
export function normalQuantile(p: number): number {
  if (!(p >= 0 && p <= 1)) {
    throw new RangeError(`normalQuantile: p must lie in [0, 1], got ${String(p)}`);
  }
  if (p === 0) return Number.NEGATIVE_INFINITY;
  if (p === 1) return Number.POSITIVE_INFINITY;
  const q = p - 0.5;
  if (Math.abs(q) <= 0.425) {
    const r = 0.180625 - q * q;
    return (q * poly(CENTRAL_NUM, r)) / poly(CENTRAL_DEN, r);
  }
  // Work with the smaller tail so that 1 − p never rounds away the digits we need.
  let r = Math.sqrt(-Math.log(q < 0 ? p : 1 - p));
  let x: number;
  if (r <= 5) {
    r -= 1.6;
    x = poly(NEAR_NUM, r) / poly(NEAR_DEN, r);
  } else {
    r -= 5;
    x = poly(FAR_NUM, r) / poly(FAR_DEN, r);
  }
  return q < 0 ? -x : x;
}
