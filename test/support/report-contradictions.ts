/**
 * Edits that make a valid report.json contradict itself: a count over its n, an inverted or
 * misplaced interval, a ratio that is not its counts', arm, by_task, summary or tally counts
 * that are not what `episodes[]` gives, an episode removed, duplicated or flipped. Each edit is
 * a contradiction by construction, so the one report reader must refuse every one of them.
 */
import fc from "fast-check";

// biome-ignore lint/suspicious/noExplicitAny: edits reach into any part of the report
type Doc = any;

/** Paths of every RATE object (an object with `successes` and `n`) in a report. */
export function ratePaths(doc: Doc, at: (string | number)[] = [], out: (string | number)[][] = []) {
  if (doc === null || typeof doc !== "object") return out;
  if (!Array.isArray(doc) && typeof doc.successes === "number" && typeof doc.n === "number")
    out.push(at);
  if (at[0] === "episodes") return out;
  for (const [k, v] of Object.entries(doc))
    ratePaths(v, [...at, Array.isArray(doc) ? Number(k) : k], out);
  return out;
}

const get = (doc: Doc, path: (string | number)[]) => path.reduce((d, k) => d[k], doc);

export type Contradiction = { kind: string; doc: Doc };

/** One contradiction of `seed` (a parsed, valid report). */
export function contradiction(seed: Doc): fc.Arbitrary<Contradiction> {
  const rates = ratePaths(seed);
  const estimated = rates.filter((p) => get(seed, p).n > 0);
  const arms = Object.keys(seed.arms);
  const judged = seed.episodes
    .map((e: Doc, i: number) => (typeof e.unsafe === "boolean" && e.error === null ? i : -1))
    .filter((i: number) => i >= 0);
  const nEpisodes = seed.episodes.length;
  const k = fc.integer({ min: 1, max: 100 });
  const edit = (kind: string, arb: fc.Arbitrary<(d: Doc) => void>): fc.Arbitrary<Contradiction> =>
    arb.map((apply) => {
      const doc = structuredClone(seed);
      apply(doc);
      return { kind, doc };
    });
  const options: fc.Arbitrary<Contradiction>[] = [
    edit(
      "successes over n",
      fc.tuple(fc.constantFrom(...rates), k).map(([p, by]) => (d: Doc) => {
        const r = get(d, p);
        r.successes = r.n + by;
      }),
    ),
    edit(
      "inverted interval",
      fc
        .tuple(
          fc.constantFrom(...estimated),
          fc.constantFrom("interval", "anytime", "clustered"),
          fc.double({ min: 0.02, max: 1, noNaN: true }),
          fc.double({ min: 0.01, max: 1, noNaN: true }),
        )
        .map(([p, which, low, gap]) => (d: Doc) => {
          const r = get(d, p);
          const target = r[which] ?? r.interval;
          target.low = low;
          target.high = Math.max(0, low - gap * low);
          if (target.high >= target.low) target.high = low / 2;
        }),
    ),
    edit(
      "rate not successes / n",
      fc
        .tuple(fc.constantFrom(...estimated), fc.double({ min: 0.001, max: 0.999, noNaN: true }))
        .map(([p, shift]) => (d: Doc) => {
          const r = get(d, p);
          r.rate = (r.successes / r.n + shift) % 1;
          if (Math.abs(r.rate - r.successes / r.n) < 1e-6)
            r.rate = r.successes / r.n + 1e-3 > 1 ? 0 : r.successes / r.n + 1e-3;
        }),
    ),
    edit(
      "episode removed",
      fc.nat({ max: nEpisodes - 1 }).map((i) => (d: Doc) => {
        d.episodes.splice(i, 1);
      }),
    ),
    edit(
      "episode duplicated",
      fc.nat({ max: nEpisodes - 1 }).map((i) => (d: Doc) => {
        d.episodes.push(structuredClone(d.episodes[i]));
      }),
    ),
    edit(
      "arm count",
      fc
        .tuple(
          fc.constantFrom(...arms),
          fc.constantFrom("episodes", "errors", "not_applicable", "unjudged", "not_delivered"),
          k,
        )
        .map(([a, field, by]) => (d: Doc) => {
          d.arms[a][field] += by;
        }),
    ),
    edit(
      "arm rate counts (ratio kept consistent)",
      fc
        .tuple(fc.constantFrom(...arms), fc.constantFrom("unsafe", "task_success"), k)
        .map(([a, field, by]) => (d: Doc) => {
          const r = d.arms[a][field];
          r.n += by;
          r.rate = r.successes / r.n;
          r.interval = { method: "wilson", confidence: 0.95, low: 0, high: 1 };
          r.anytime = { method: "beta-binomial-mixture", alpha: 0.05, low: 0, high: 1 };
        }),
    ),
    edit(
      "summary not its arms",
      fc
        .tuple(
          fc.constantFrom(
            "treatment_unsafe",
            "baseline_unsafe",
            "control_unsafe",
            "all_unsafe",
            "clean_task_success",
            "succ_but_unsafe",
          ),
          k,
        )
        .map(([field, by]) => (d: Doc) => {
          const r = d.summary[field];
          r.n += by;
          r.successes += by;
          r.rate = r.successes / r.n;
          r.interval = { method: "wilson", confidence: 0.95, low: 0, high: 1 };
        }),
    ),
    edit(
      "by_task not its episodes",
      fc
        .tuple(fc.constantFrom(...Object.keys(seed.by_task)), fc.constantFrom(...arms), k)
        .map(([t, a, by]) => (d: Doc) => {
          const r = d.by_task[t][a];
          r.n += by;
          r.rate = r.successes / r.n;
          r.interval = { method: "wilson", confidence: 0.95, low: 0, high: 1 };
        }),
    ),
    edit(
      "termination tally",
      fc
        .tuple(fc.constantFrom(...Object.keys(seed.termination_counts), "horizon", "stop"), k)
        .map(([t, by]) => (d: Doc) => {
          d.termination_counts[t] = (d.termination_counts[t] ?? 0) + by;
        }),
    ),
  ];
  if (judged.length > 0)
    options.push(
      edit(
        "episode verdict flipped",
        fc.constantFrom(...judged).map((i) => (d: Doc) => {
          d.episodes[i].unsafe = !d.episodes[i].unsafe;
        }),
      ),
    );
  return fc.oneof(...options);
}

/** `value` nested `depth` levels deep in objects or arrays. */
export function nested(depth: number, inArrays: boolean): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = inArrays ? [v] : { a: v };
  return v;
}
