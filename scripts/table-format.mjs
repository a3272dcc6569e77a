// How the measurement scripts print a p-value in the docs' tables, said once: two significant
// figures, scientific below 0.001, "1.0" at the top, "—" where no test ran.

/** @param {number | null | undefined} x */
export function formatP(x) {
  if (x === null || x === undefined) return "—";
  if (x >= 0.9995) return "1.0";
  return x < 0.001 ? x.toExponential(1) : x.toPrecision(2);
}
