/**
 * A report replayed from its own contents: `provael attack --from DIR/report.json` rebuilds the
 * plan the report measured (tasks, arms and every arm's parameters, seeds, horizon, policy
 * options, multiplicity) so that playing it again gives the same report bytes. What a report
 * cannot carry (calibration files, plugin files, a served policy's address) the caller supplies,
 * and the run checks those against the digests the report recorded.
 */
import { attacks } from "../attacks/index.js";
import { canonicalJson } from "../core/canonical-json.js";
import { ProvaelError } from "../core/errors.js";
import { defenses } from "../defenses/index.js";
import type { Report } from "../report/build.js";
import type { PlanSpec } from "./plan.js";

/** The parameters that differ from the attack's defaults (what a plan records). */
function nonDefault(arm: string, params: Record<string, unknown>): Record<string, unknown> {
  const defaults = attacks.get(arm).params.parse({}) as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(params).filter(([k, v]) => canonicalJson(v) !== canonicalJson(defaults[k])),
  );
}

/** The plan's defenses from a report's `run.defenses`: params that differ from the defaults. */
function defensePlan(run: Report["run"]): Pick<PlanSpec, "defenses"> {
  const d = run.defenses;
  if (!d) return {};
  const params: Record<string, Record<string, unknown>> = {};
  for (const id of d.ids) {
    const defaults = defenses.get(id).params.parse({}) as Record<string, unknown>;
    const changed = Object.fromEntries(
      Object.entries(d.params[id] ?? {}).filter(
        ([k, v]) => canonicalJson(v) !== canonicalJson(defaults[k]),
      ),
    );
    if (Object.keys(changed).length > 0) params[id] = changed;
  }
  return { defenses: { ids: d.ids, compare: d.compare, params } };
}

/** The plan a report was made from. Throws when the report predates recorded parameters. */
export function planFromReport(report: Report, source: string): PlanSpec {
  const run = report.run;
  if (!run.attack_params || !run.policy_options) {
    throw new ProvaelError(
      "config/invalid",
      `${source} does not record its arms' parameters and policy options, so it cannot be replayed`,
      {
        details: { source },
        hint: "replay a report written by this version, or pass the original flags instead of --from",
      },
    );
  }
  if (run.bridge) {
    throw new ProvaelError(
      "config/invalid",
      `${source} was played by a benchmark through \`provael bridge\`; Provael cannot replay it`,
      { hint: "run the benchmark again against `provael bridge` with the same arms" },
    );
  }
  const attackParams: Record<string, Record<string, unknown>> = {};
  for (const arm of run.arms) {
    const changed = nonDefault(arm, run.attack_params[arm] ?? {});
    if (Object.keys(changed).length > 0) attackParams[arm] = changed;
  }
  const calibration = Object.fromEntries(
    Object.entries(report.calibration).flatMap(([task, c]) =>
      c.digest !== null ? [[task, c.digest]] : [],
    ),
  );
  const multiplicity = report.summary.significance?.multiplicity;
  return {
    policy: run.policy,
    suite: run.suite,
    tasks: run.tasks,
    arms: run.arms,
    seed: run.seed,
    seeds: run.seeds,
    repeats: run.repeats,
    horizon: run.horizon,
    termination: run.termination,
    scene_pin: run.scene_pin,
    policy_options: run.policy_options,
    attack_params: attackParams,
    calibration,
    ...(multiplicity === "bh" ? { multiplicity } : {}),
    ...(run.plugins ? { plugins: run.plugins } : {}),
    ...(run.waivers.length > 0 ? { waivers: run.waivers } : {}),
    ...defensePlan(run),
  };
}
