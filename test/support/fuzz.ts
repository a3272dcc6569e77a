/**
 * Shared pieces of the property-based fuzz suite (test/fuzz/). Each property runs FUZZ_RUNS
 * cases (default 60, so the whole suite takes seconds in `npm test`), seeded by FUZZ_SEED so a
 * failure replays; `node scripts/fuzz.mjs` runs the same properties longer. When FUZZ_REPORT
 * names a file, every property appends one JSON line saying how many cases it ran.
 */
import { appendFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { ProvaelError } from "../../src/core/errors.js";

export const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
export const SEED = Number(process.env.FUZZ_SEED ?? 16);

/**
 * Asserts `predicate` over `arb` and records the number of cases run, and how many ended in
 * each outcome the predicate names (`refused`, `accepted`, …) when it returns one. `share`
 * scales this property's runs (an expensive input runs fewer cases than a cheap one).
 */
export function fuzz<T>(
  name: string,
  arb: fc.Arbitrary<T>,
  // biome-ignore lint/suspicious/noConfusingVoidType: a predicate may return nothing or an outcome
  predicate: (value: T) => string | void,
  share = 1,
): void {
  let cases = 0;
  const outcomes: Record<string, number> = {};
  const numRuns = Math.max(1, Math.round(RUNS * share));
  const t0 = performance.now();
  const result = fc.check(
    fc.property(arb, (v) => {
      cases += 1;
      const outcome = predicate(v);
      if (typeof outcome === "string") outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    }),
    { numRuns, seed: SEED },
  );
  if (result.failed) {
    // Counterexamples can be whole reports: they go to a file, the message stays readable.
    const file = join(tmpdir(), `provael-fuzz-${name.replace(/[^a-z0-9]+/gi, "-")}.json`);
    writeFileSync(
      file,
      JSON.stringify(result.counterexample, (_, v) =>
        v instanceof Uint8Array ? Buffer.from(v).toString("latin1") : v,
      ),
    );
    const error = result.errorInstance as Error | undefined;
    throw new Error(
      `${name}: failed after ${result.numRuns} case(s) (seed ${result.seed}, path ${result.counterexamplePath}); counterexample in ${file}\n${error?.stack ?? String(result.errorInstance)}`,
    );
  }
  if (process.env.FUZZ_REPORT) {
    appendFileSync(
      process.env.FUZZ_REPORT,
      `${JSON.stringify({ property: name, cases, outcomes, ms: Math.round(performance.now() - t0) })}\n`,
    );
  }
}

/** Runs `fn`; an exception that is not a ProvaelError fails the property. Says whether it threw. */
export function onlyProvaelErrors(fn: () => void): boolean {
  try {
    fn();
    return false;
  } catch (e) {
    if (!(e instanceof ProvaelError)) throw e;
    return true;
  }
}

/** Bytes of a valid seed with bytes flipped, a slice cut out, or random bytes spliced in. */
export function mutatedBytes(seeds: readonly Uint8Array[]): fc.Arbitrary<Uint8Array> {
  return fc
    .tuple(
      fc.constantFrom(...seeds),
      fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 8 }),
      fc.option(fc.tuple(fc.nat(), fc.nat({ max: 64 }))),
      fc.option(fc.tuple(fc.nat(), fc.uint8Array({ maxLength: 16 }))),
    )
    .map(([seed, flips, cut, splice]) => {
      let b = Uint8Array.from(seed);
      for (const [at, v] of flips) b[at % b.length] = v;
      if (cut) {
        const at = cut[0] % b.length;
        b = Buffer.concat([b.subarray(0, at), b.subarray(at + cut[1])]);
      }
      if (splice) {
        const at = splice[0] % (b.length + 1);
        b = Buffer.concat([b.subarray(0, at), splice[1], b.subarray(at)]);
      }
      return b;
    });
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Every path to a value inside a JSON tree (the root excluded). */
function paths(v: Json, at: (string | number)[] = [], out: (string | number)[][] = []) {
  if (Array.isArray(v)) {
    v.forEach((x, i) => {
      out.push([...at, i]);
      paths(x, [...at, i], out);
    });
  } else if (v !== null && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) {
      out.push([...at, k]);
      paths(x, [...at, k], out);
    }
  }
  return out;
}

/** A replacement value: another type, an edge number, an empty container, or random JSON. */
const replacement: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(null, true, false, 0, -1, 1e308, -0.5, 2 ** 53, "", "x", [], {}),
  fc.constantFrom<Json>("../../x", "c00000000000000000000", "sha256:", "none", "NaN"),
  fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>,
);

/**
 * A valid JSON document with up to four structural edits at random paths: a value replaced,
 * a key deleted, or an array emptied or duplicated. Edits keep most of the document valid, so
 * inputs reach far past the first schema check.
 */
export function mutatedJson(seed: unknown): fc.Arbitrary<unknown> {
  const doc = seed as Json;
  const all = paths(doc);
  return fc
    .array(
      fc.tuple(
        fc.nat({ max: all.length - 1 }),
        fc.constantFrom("replace", "delete", "empty", "duplicate"),
        replacement,
      ),
      { minLength: 1, maxLength: 4 },
    )
    .map((edits) => {
      const copy = structuredClone(doc);
      for (const [i, kind, value] of edits) {
        const path = all[i] as (string | number)[];
        let parent: Json = copy;
        for (const p of path.slice(0, -1)) {
          if (parent === null || typeof parent !== "object") break;
          parent = (parent as Record<string | number, Json>)[p] as Json;
        }
        if (parent === null || typeof parent !== "object") continue;
        const key = path[path.length - 1] as string | number;
        const holder = parent as Record<string | number, Json>;
        if (!(key in holder)) continue;
        if (kind === "replace") holder[key] = value;
        else if (kind === "delete") {
          if (Array.isArray(holder)) holder.splice(key as number, 1);
          else delete holder[key];
        } else if (kind === "empty") {
          const v = holder[key];
          holder[key] = Array.isArray(v) ? [] : v !== null && typeof v === "object" ? {} : value;
        } else {
          const v = holder[key];
          if (Array.isArray(v) && v.length > 0) v.push(structuredClone(v[0] as Json));
          else holder[key] = value;
        }
      }
      return copy;
    });
}
