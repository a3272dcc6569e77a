/**
 * The default attacker budget of an attack in words, derived from its params' defaults (so the
 * `list-attacks` table and docs/attacks.md cannot drift from the code): query budgets of search
 * attacks, PGD steps and norm bounds of gradient attacks, bit-flip counts of weight attacks.
 */

/** A one-line budget from default params, or "—" for an attack without an attacker budget. */
export function budgetSummary(defaults: Record<string, unknown>): string {
  const parts: string[] = [];
  const num = (k: string) => (typeof defaults[k] === "number" ? (defaults[k] as number) : null);
  const budget = num("budget");
  if (budget !== null) parts.push(`${budget} queries/episode`);
  const fit = num("fitQueries");
  if (fit !== null) parts.push(`${fit} queries once (fit), 0/episode`);
  const eps = num("epsilon");
  const steps = num("steps");
  const refresh = num("refresh");
  if (steps !== null && eps !== null) {
    const bound = Number.isInteger(eps * 255) ? `${eps * 255}/255` : String(eps);
    parts.push(
      `PGD ${steps} steps${refresh !== null ? ` every ${refresh} steps` : ""}, L∞ ≤ ${bound}`,
    );
  }
  const flips = num("flips");
  if (flips !== null) parts.push(`${flips} bit flip${flips === 1 ? "" : "s"}/episode`);
  return parts.length > 0 ? parts.join("; ") : "—";
}
