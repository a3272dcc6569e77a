/**
 * What Provael reads from a vla-eval config (`--benchmark`): the benchmarks it names (their
 * import strings pick the profile) and how many episodes per task each plays. The file itself is
 * the benchmark's business; only these fields are read, and a file without them is refused
 * before anything starts.
 */
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { ProvaelError } from "../../core/errors.js";
import { type BenchmarkProfile, loadProfile, profileForBenchmark } from "../profile.js";

export interface BenchmarkConfig {
  path: string;
  /** Each `benchmarks[].benchmark` import string, in order. */
  benchmarks: string[];
  /** Each entry's `episodes_per_task` (null where the entry does not say). */
  episodesPerTask: (number | null)[];
}

export function readBenchmarkConfig(path: string): BenchmarkConfig {
  let raw: unknown;
  try {
    raw = parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new ProvaelError(
      "config/invalid",
      `--benchmark ${path}: cannot read it as YAML: ${(e as Error).message}`,
      {
        hint: "pass the vla-eval config you would give `vla-eval run --config` (e.g. configs/benchmarks/libero/spatial.yaml)",
      },
    );
  }
  const list = (raw as { benchmarks?: unknown } | null)?.benchmarks;
  const entries = Array.isArray(list) ? (list as Record<string, unknown>[]) : [];
  const benchmarks = entries.map((e) => (e && typeof e === "object" ? e.benchmark : undefined));
  if (entries.length === 0 || benchmarks.some((b) => typeof b !== "string")) {
    throw new ProvaelError(
      "config/invalid",
      `--benchmark ${path}: no benchmarks[].benchmark import string in it`,
      { hint: "a vla-eval config lists `benchmarks: [{benchmark: module:Class, …}]`" },
    );
  }
  return {
    path,
    benchmarks: benchmarks as string[],
    episodesPerTask: entries.map((e) =>
      Number.isInteger(e.episodes_per_task) ? (e.episodes_per_task as number) : null,
    ),
  };
}

/**
 * The profile for a run: `--profile` when given, else the built-in profile of the benchmarks the
 * config names (one profile for all of them).
 */
export function profileFor(
  given: string | undefined,
  config: BenchmarkConfig | null,
): BenchmarkProfile {
  if (given !== undefined && given !== "auto") return loadProfile(given);
  if (config === null) {
    throw new ProvaelError("config/invalid", "--suite vla-eval needs --profile or --benchmark", {
      hint: "pass the vla-eval config (--benchmark C.yaml) so the profile is read from it, or name the profile (--profile libero)",
    });
  }
  const found = [...new Set(config.benchmarks)].map((b) => profileForBenchmark(b));
  const ids = [...new Set(found.map((p) => p.id))];
  if (ids.length > 1) {
    throw new ProvaelError(
      "config/invalid",
      `${config.path} names benchmarks of several profiles (${ids.join(", ")}); one run plays one`,
      { hint: "split the config, one run per profile" },
    );
  }
  return found[0] as BenchmarkProfile;
}
