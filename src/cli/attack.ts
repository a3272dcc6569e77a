import type { Command } from "commander";
import { loadAcceptance } from "../config/acceptance.js";
import { integer, type ParamValue } from "../config/parse.js";
import {
  addPlanFlags,
  checkAttackParamsOf,
  defensePlanOf,
  type FlagValues,
  planFromFlags,
  refuseReplayedFlags,
  replayedPlan,
} from "../config/plan-flags.js";
import { loadPlugins, pluginSource } from "../config/plugins.js";
import {
  applyRecipe as applyRecipeTo,
  effectiveDefaults,
  loadRecipe,
  RECIPES,
  type Recipe,
} from "../config/recipes.js";
import type { Multiplicity } from "../core/plan.js";
import { checkPolicyOptions } from "../core/registry.js";
import { policies } from "../policies/index.js";
import { readReportFile } from "../rundir/report.js";
import { type LoadedCalibration, loadCalibrations } from "../runner/calibration.js";
import { planSeconds } from "../runner/estimate.js";
import { defaultWorkers } from "../runner/executor.js";
import type { PlanSpec, Termination } from "../runner/plan.js";
import { DEFAULT_INFRA_RETRIES } from "../runner/pool.js";
import { planFromReport } from "../runner/replay.js";
import { parseShard, type RunOptions } from "../runner/run.js";
import { suites } from "../suites/index.js";
import {
  addBenchmarkFlags,
  BENCHMARK_SUITE,
  type BenchmarkFlags,
  refuseBenchmarkFlags,
  runBenchmarkSuite,
} from "./attack-benchmark.js";
import { defaultOut, dryRun, playAndPrint } from "./play.js";
import { probeAndPrint, probePlan } from "./probe.js";
import { addServedPolicyFlags, type ServedFlags, servedPolicyOptions } from "./serve-policy.js";

interface AttackFlags extends ServedFlags {
  probeConventions?: boolean;
  allowCalibrationOverlap?: boolean;
  allowTrainingScenes?: boolean;
  policy: string;
  suite: string;
  attacks: string[];
  tasks?: string[];
  seeds: number;
  seed: number;
  repeats: number;
  horizon?: number;
  termination: Termination;
  multiplicity: Multiplicity;
  concurrency: number;
  scenePin: number;
  out?: string;
  resume?: boolean;
  json?: boolean;
  dryRun?: boolean;
  maxErrors?: number;
  recipe: string;
  controls: boolean;
  workers?: number;
  shard?: string;
  sarifOut?: string;
  html?: boolean;
  protocol?: string;
  calib?: string;
  requireCalibrated?: boolean;
  policyOption?: Record<string, ParamValue>;
  attackParam?: Record<string, Record<string, ParamValue>>;
  defenses?: string[];
  compareDefenses?: string[];
  defenseParam?: Record<string, Record<string, unknown>>;
  plugin?: string[];
  reuse?: string[];
  from?: string;
  policyPath?: string;
  policyUrl?: string[];
  retryErrors?: number;
}

export function registerAttack(program: Command): void {
  const cmd = program.command("attack");
  // The plan's flags, from the one flag table (src/config/plan-flags.ts).
  addPlanFlags(cmd, "attack")
    .option(
      "--retry-errors <n>",
      `times a cell lost to a policy server's failure (connection, timeout, error frame) is played again, on another server of the pool when there is one (default ${DEFAULT_INFRA_RETRIES})`,
      integer("--retry-errors", { min: 0 }),
    )
    .option("--out <dir>", "run directory (default: runs/<policy>-<suite>-<time>)")
    .option(
      "--resume",
      "finish the run in --out, skipping finished cells (errored cells are played again)",
    )
    .option(
      "--reuse <dir>",
      "copy the finished episodes of an earlier run whose plan differs only in --seeds (e.g. 5 seeds, now 10) instead of playing them; repeatable",
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option(
      "--max-errors <n>",
      "abort the run once more than n episodes errored",
      integer("--max-errors", { min: 0 }),
    )
    .option("--json", "print a JSON summary instead of tables")
    .option("--dry-run", "print the plan (tasks, seeds, arms, episodes) and play nothing")
    .option(
      "--workers <n>",
      "worker threads for in-process policies (default: every core; this thread for a plan estimated under 5 s)",
      integer("--workers", { min: 1 }),
    )
    .option(
      "--shard <k/N>",
      "play only the k-th of N round-robin slices of the plan (merge with `provael merge`)",
    )
    .option("--sarif-out <file>", "also write the SARIF 2.1.0 log of the run to this file")
    .option("--no-html", "skip report.html (rendering its charts takes about a second)")
    .option("--protocol <file>", "acceptance protocol (YAML/JSON): decide pass, fail or incomplete")
    .option(
      "--require-calibrated",
      "refuse tasks scored by default predicates (or PROVAEL_REQUIRE_CALIBRATED=1)",
    )
    .option(
      "--from <report.json>",
      "replay the plan a finished run's report recorded (tasks, arms and their params, seeds, policy options); pass its --calib and --plugin files again",
    )
    .option(
      "--plugin <file>",
      "ES module exporting attacks, policies or suites (defineAttack, …) to register, repeatable",
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .addHelpText("after", () => `\n${effectiveDefaults()}`)
    .action(async (raw: AttackFlags, command: Command) => {
      const recipe = loadRecipe(raw.recipe);
      // Plugins first: the flags below may name what they register.
      const pluginSources = [...(recipe.plugins ?? []), ...(raw.plugin ?? [])].map((p) =>
        pluginSource(p),
      );
      await loadPlugins(pluginSources);
      const flags = applyRecipe(raw, recipe, command);
      if (flags.suite === BENCHMARK_SUITE) {
        await runBenchmarkSuite(flags as unknown as BenchmarkFlags, command, {
          checkAttackParams: checkAttackParamsOf,
          defenses: defensePlanOf(flags as unknown as FlagValues).defenses,
          protocol: flags.protocol ? loadAcceptance(flags.protocol) : null,
          recipe: { name: recipe.name, source: RECIPES.includes(recipe) ? "built-in" : raw.recipe },
        });
        return;
      }
      refuseBenchmarkFlags(command);
      checkPolicyOptions(policies.get(flags.policy), flags.policyOption ?? {});
      const protocol = flags.protocol ? loadAcceptance(flags.protocol) : null;
      const calibrations = flags.calib ? loadCalibrations(flags.calib) : {};
      const requireCalibrated =
        Boolean(flags.requireCalibrated) || process.env.PROVAEL_REQUIRE_CALIBRATED === "1";
      // Served-policy flags: behaviour ones join the plan; secrets and timeouts reach only the policy.
      const served = servedPolicyOptions(flags);
      const plan: PlanSpec = raw.from
        ? replayPlan(raw.from, command, flags)
        : (planFromFlags("attack", flags as unknown as FlagValues, {
            suiteTasks: suites
              .get(flags.suite)
              .tasks()
              .map((t) => t.id),
            calibrations: Object.fromEntries(
              Object.entries(calibrations).map(([t, c]) => [t, c.digest]),
            ),
            servedPlan: served.plan,
          }) as PlanSpec);
      const out = flags.out ?? defaultOut(plan.policy, plan.suite);
      const runOptions: Omit<RunOptions, "onProgress" | "signal"> = {
        plan,
        out,
        resume: Boolean(flags.resume),
        concurrency: flags.concurrency,
        policyOptions: {
          ...plan.policy_options,
          ...(flags.policyUrl?.[0] ? { url: flags.policyUrl[0] } : {}),
          extra: {
            ...((plan.policy_options.extra ?? {}) as Record<string, unknown>),
            ...served.extra,
          },
        },
        calibrations: Object.fromEntries(
          plan.tasks
            .filter((t) => calibrations[t])
            .map((t) => [t, calibrations[t] as LoadedCalibration]),
        ),
        requireCalibrated,
        workers: flags.workers ?? defaultWorkers(planSeconds(plan)),
        shard: flags.shard === undefined ? null : parseShard(flags.shard),
        commandLine: process.argv.slice(1),
        ...(flags.maxErrors === undefined ? {} : { maxErrors: flags.maxErrors }),
        ...(flags.policyUrl?.length ? { policyUrls: flags.policyUrl } : {}),
        ...(flags.retryErrors === undefined ? {} : { infraRetries: flags.retryErrors }),
        ...(pluginSources.length > 0 ? { plugins: pluginSources } : {}),
        ...(flags.reuse ? { reuse: flags.reuse } : {}),
        finish: {
          html: flags.html !== false,
          protocol,
          ...(flags.sarifOut === undefined ? {} : { sarifOut: flags.sarifOut }),
          recipe: { name: recipe.name, source: RECIPES.includes(recipe) ? "built-in" : raw.recipe },
        },
      };
      if (flags.dryRun) {
        await dryRun(runOptions, flags);
        return;
      }
      if (flags.probeConventions) {
        await probeAndPrint({ ...runOptions, plan: probePlan(plan, command) }, Boolean(flags.json));
        return;
      }
      await playAndPrint(runOptions, {
        json: Boolean(flags.json),
        html: flags.html !== false,
        reuse: flags.reuse,
      });
    });
  // Served and ONNX policy flags (--api-key, --layout, --io-map, --replan, --timeout, …).
  addServedPolicyFlags(program.commands.find((c) => c.name() === "attack") as Command);
  // A vla-eval benchmark launched per arm (--suite vla-eval).
  addBenchmarkFlags(program.commands.find((c) => c.name() === "attack") as Command);
}

/** The plan of `--from FILE`, refusing flags that would change what it plays. */
function replayPlan(file: string, command: Command, flags: AttackFlags): PlanSpec {
  refuseReplayedFlags(command, "attack", file);
  const plan = planFromReport(readReportFile(file, `--from ${file}`).report, file);
  return replayedPlan("attack", flags as unknown as FlagValues, plan);
}

/** The recipe under the flags given on the command line (config/recipe-rules.ts). */
function applyRecipe(flags: AttackFlags, recipe: Recipe, command: Command): AttackFlags {
  const applied = applyRecipeTo(
    flags as unknown as FlagValues,
    recipe,
    (key) => command.getOptionValueSource(key) === "cli",
  );
  if (applied.note) process.stderr.write(`provael: ${applied.note}\n`);
  return applied.flags as unknown as AttackFlags;
}
