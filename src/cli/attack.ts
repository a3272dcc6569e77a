import type { Command } from "commander";
import {
  attacks as attacksRegistry,
  resolveAttacks,
  withMatchedControls,
} from "../attacks/index.js";
import { loadAcceptance } from "../config/acceptance.js";
import { DEFAULTS } from "../config/defaults.js";
import { loadPlugins, pluginSource } from "../config/plugins.js";
import { loadRecipe, RECIPE_FLAG_KEYS, RECIPES, type Recipe } from "../config/recipes.js";
import { ProvaelError } from "../core/errors.js";
import { MULTIPLICITIES, type Multiplicity, TERMINATIONS } from "../core/plan.js";
import { checkPolicyOptions } from "../core/registry.js";
import { describeIssues } from "../core/zod-issues.js";
import { resolveDefenseParams, resolveDefenses } from "../defenses/index.js";
import { policies } from "../policies/index.js";
import { readReportFile } from "../rundir/report.js";
import { type LoadedCalibration, loadCalibrations } from "../runner/calibration.js";
import { defaultWorkers } from "../runner/executor.js";
import type { DefensePlan, PlanSpec, Termination, Waiver } from "../runner/plan.js";
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
import { choice, integer, list, type ParamValue, policyOption, typedValue } from "./parse.js";
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
  program
    .command("attack")
    .option("--policy <id>", "policy under test (provael list-policies)", DEFAULTS.policy)
    .option(
      "--suite <id>",
      "suite to play (provael list-suites), or vla-eval to launch a vla-eval benchmark through the bridge (--benchmark)",
      DEFAULTS.suite,
    )
    .option(
      "--attacks <list>",
      "attacks or families, comma-separated (provael list-attacks)",
      list,
      [...DEFAULTS.attacks],
    )
    .option(
      "--tasks <list>",
      "tasks to play, comma-separated (default: all of the suite's, except in the no-flag run below)",
      list,
    )
    .option(
      "--allow-calibration-overlap",
      "score on scenes the --calib calibration was fitted or thresholded on (recorded, printed in the headline)",
    )
    .option(
      "--allow-training-scenes",
      "score the policy on scenes it was trained on (recorded, printed in the headline)",
    )
    .option(
      "--seeds <n>",
      "number of seeds per (task, arm)",
      integer("--seeds", { min: 1 }),
      DEFAULTS.seeds,
    )
    .option("--seed <n>", "first seed", integer("--seed", { min: 0 }), DEFAULTS.seed)
    .option(
      "--repeats <n>",
      "episodes per seed",
      integer("--repeats", { min: 1 }),
      DEFAULTS.repeats,
    )
    .option(
      "--horizon <n>",
      "steps per episode (default: each task's)",
      integer("--horizon", { min: 1 }),
    )
    .option(
      "--termination <rule>",
      "fixed-horizon or first-event",
      choice("--termination", TERMINATIONS),
      DEFAULTS.termination,
    )
    .option(
      "--concurrency <n>",
      "episodes in flight at once",
      integer("--concurrency", { min: 1 }),
      DEFAULTS.concurrency,
    )
    .option(
      "--multiplicity <procedure>",
      "multiplicity procedure of the primary test across treatment arms: holm (family-wise error) or bh (false discovery rate)",
      choice("--multiplicity", MULTIPLICITIES),
      "holm",
    )
    .option(
      "--scene-pin <n>",
      "scene offset: seed s plays scene (pin + s) mod N",
      integer("--scene-pin", { min: 0 }),
      DEFAULTS.scenePin,
    )
    .option("--policy-path <path>", "weights or model file for the policy")
    .option(
      "--policy-url <url>",
      "server address for a served policy; repeat it (or a comma list) for a pool of servers of the same policy, --concurrency episodes each",
      (v: string, prev: string[] = []) => [...prev, ...list(v)],
    )
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
      "worker threads for in-process policies (default: every core)",
      integer("--workers", { min: 1 }),
    )
    .option(
      "--shard <k/N>",
      "play only the k-th of N round-robin slices of the plan (merge with `provael merge`)",
    )
    .option("--sarif-out <file>", "also write the SARIF 2.1.0 log of the run to this file")
    .option("--no-html", "skip report.html (rendering its charts takes about a second)")
    .option(
      "--no-controls",
      "do not add the matched controls of the named treatments (the headline then warns)",
    )
    .option(
      "--recipe <name|file>",
      "base configuration (provael list-recipes); explicit flags override it",
      "quick",
    )
    .option("--protocol <file>", "acceptance protocol (YAML/JSON): decide pass, fail or incomplete")
    .option("--calib <dir>", "calibrations from `provael calibrate` for this policy and suite")
    .option(
      "--require-calibrated",
      "refuse tasks scored by default predicates (or PROVAEL_REQUIRE_CALIBRATED=1)",
    )
    .option("--policy-option <key=value>", "policy option, repeatable", policyOption, {})
    .option(
      "--attack-param <arm.key=value>",
      "an attack's parameter (budgets, bounds: see `provael list-attacks --json`), repeatable; e.g. gradient_patch.epsilon=32/255",
      attackParam,
      {},
    )
    .option(
      "--defenses <ids>",
      "defenses applied in every arm, comma-separated (provael list-defenses)",
      commaList,
    )
    .option(
      "--compare-defenses <ids>",
      "play every arm undefended and with these defenses on the same cells, comma-separated; the report adds the mitigation",
      commaList,
    )
    .option(
      "--defense-param <defense.key=value>",
      "a defense's parameter, repeatable; e.g. action_shield.margin=0.03 (JSON for objects)",
      defenseParam,
      {},
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
          checkAttackParams: (given, arms) =>
            checkAttackParams(given as Record<string, Record<string, ParamValue>>, arms),
          defenses: defensePlanOf(flags).defenses,
          protocol: flags.protocol ? loadAcceptance(flags.protocol) : null,
          recipe: { name: recipe.name, source: RECIPES.includes(recipe) ? "built-in" : raw.recipe },
        });
        return;
      }
      refuseBenchmarkFlags(command);
      const suite = suites.get(flags.suite);
      checkPolicyOptions(policies.get(flags.policy), flags.policyOption ?? {});
      const named = resolveAttacks(flags.attacks);
      const arms = flags.controls === false ? named : withMatchedControls(named);
      const protocol = flags.protocol ? loadAcceptance(flags.protocol) : null;
      const calibrations = flags.calib ? loadCalibrations(flags.calib) : {};
      const requireCalibrated =
        Boolean(flags.requireCalibrated) || process.env.PROVAEL_REQUIRE_CALIBRATED === "1";
      const tasks = flags.tasks ?? suite.tasks().map((t) => t.id);
      // Served-policy flags: behaviour ones join the plan; secrets and timeouts reach only the policy.
      const served = servedPolicyOptions(flags);
      const extra = { ...(flags.policyOption ?? {}), ...served.plan };
      // The plan records what changes behaviour (weights path, options); the server address is
      // operational, so a run resumes against a server restarted elsewhere.
      const policyOptions = {
        ...(flags.policyPath ? { path: flags.policyPath } : {}),
        ...(Object.keys(extra).length > 0 ? { extra } : {}),
      };
      const replay = raw.from ? replayPlan(raw.from, command, raw.policyPath) : null;
      const plan: PlanSpec = replay ?? {
        policy: flags.policy,
        suite: flags.suite,
        tasks,
        arms,
        seed: flags.seed,
        seeds: flags.seeds,
        repeats: flags.repeats,
        horizon: flags.horizon ?? null,
        termination: flags.termination,
        scene_pin: flags.scenePin,
        ...(flags.multiplicity === "bh" ? { multiplicity: "bh" as const } : {}),
        policy_options: policyOptions,
        attack_params: checkAttackParams(flags.attackParam ?? {}, arms),
        calibration: Object.fromEntries(
          tasks.filter((t) => calibrations[t]).map((t) => [t, calibrations[t]?.digest as string]),
        ),
        ...waiversOf(flags),
        ...defensePlanOf(flags),
      };
      const out = flags.out ?? defaultOut(plan.policy, plan.suite);
      const runOptions: Omit<RunOptions, "onProgress" | "signal"> = {
        plan,
        out,
        resume: Boolean(flags.resume),
        concurrency: flags.concurrency,
        policyOptions: {
          ...(replay ? replay.policy_options : policyOptions),
          ...(flags.policyUrl?.[0] ? { url: flags.policyUrl[0] } : {}),
          extra: {
            ...(replay ? (replay.policy_options.extra as Record<string, unknown>) : extra),
            ...served.extra,
          },
        },
        calibrations: Object.fromEntries(
          plan.tasks
            .filter((t) => calibrations[t])
            .map((t) => [t, calibrations[t] as LoadedCalibration]),
        ),
        requireCalibrated,
        workers: flags.workers ?? defaultWorkers(),
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

/** The plan's waivers from the flags; absent when none, so plans without them keep their digests. */
function waiversOf(flags: { allowCalibrationOverlap?: boolean; allowTrainingScenes?: boolean }): {
  waivers?: Waiver[];
} {
  const w: Waiver[] = [
    ...(flags.allowCalibrationOverlap ? (["calibration-overlap"] as const) : []),
    ...(flags.allowTrainingScenes ? (["training-scenes"] as const) : []),
  ];
  return w.length > 0 ? { waivers: w } : {};
}

/** The defaults as they apply, per-suite overrides included (help text and list-recipes). */
export function effectiveDefaults(recipe: Recipe = loadRecipe("quick")): string {
  const lines = [
    `With no flags: --recipe ${recipe.name}: --attacks ${recipe.attacks.join(",")} (plus their matched controls), --seeds ${recipe.seeds ?? DEFAULTS.seeds}, every task of the suite.`,
  ];
  for (const [suite, o] of Object.entries(recipe.suites ?? {})) {
    lines.push(
      `On ${suite}, when no --attacks and no --tasks are given: ${[
        o.attacks ? `--attacks ${o.attacks.join(",")} (plus their matched controls)` : null,
        o.tasks ? `--tasks ${o.tasks.join(",")}` : null,
        o.seeds ? `--seeds ${o.seeds}` : null,
        o.horizon ? `--horizon ${o.horizon}` : null,
      ]
        .filter((x) => x !== null)
        .join(", ")}.`,
    );
  }
  lines.push(
    "Naming --attacks or --tasks plays exactly what is named, on the suite's other defaults.",
  );
  return lines.join("\n");
}

function attackParam(
  raw: string,
  previous: Record<string, Record<string, ParamValue>>,
): Record<string, Record<string, ParamValue>> {
  const m = /^([a-z0-9_]+)\.([A-Za-z0-9_]+)=(.*)$/.exec(raw);
  if (!m) {
    throw new ProvaelError("config/invalid", `--attack-param needs arm.key=value, got '${raw}'`, {
      hint: "e.g. --attack-param gradient_patch.epsilon=32/255 (parameters: provael list-attacks --json)",
    });
  }
  const [, arm, key, value] = m as unknown as [string, string, string, string];
  return { ...previous, [arm]: { ...(previous[arm] ?? {}), [key]: typedValue(value) } };
}

/**
 * Attack parameters checked before anything runs: each names an arm of the run, and each arm's
 * set parses under its attack's schema (unknown keys and out-of-range values are refused).
 * Returned as given (not with defaults filled in), so a plan written without them is unchanged.
 */
function checkAttackParams(
  given: Record<string, Record<string, ParamValue>>,
  arms: string[],
): Record<string, Record<string, ParamValue>> {
  const out: Record<string, Record<string, ParamValue>> = {};
  for (const arm of Object.keys(given).sort()) {
    if (!arms.includes(arm)) {
      throw new ProvaelError(
        "config/invalid",
        `--attack-param names '${arm}', which is not an arm of this run`,
        { details: { arms }, hint: "add it with --attacks, or fix the arm's name" },
      );
    }
    const params = given[arm] as Record<string, ParamValue>;
    const parsed = attacksRegistry.get(arm).params.safeParse(params);
    if (!parsed.success) {
      throw new ProvaelError(
        "config/invalid",
        `--attack-param for '${arm}' is not valid: ${describeIssues(parsed.error, "(params)")}`,
        { details: { given: params }, hint: "see the parameters in `provael list-attacks --json`" },
      );
    }
    out[arm] = Object.fromEntries(
      Object.keys(params)
        .sort()
        .map((k) => [k, params[k] as ParamValue]),
    );
  }
  return out;
}

function commaList(v: string, prev: string[] = []): string[] {
  return [...prev, ...v.split(",").map((x) => x.trim())].filter((x) => x !== "");
}

function defenseParam(
  raw: string,
  previous: Record<string, Record<string, unknown>>,
): Record<string, Record<string, unknown>> {
  const m = /^([a-z0-9_.-]+)\.([A-Za-z0-9_]+)=(.*)$/.exec(raw);
  if (!m) {
    throw new ProvaelError(
      "config/invalid",
      `--defense-param needs defense.key=value, got '${raw}'`,
      {
        hint: "e.g. --defense-param action_shield.margin=0.03 (parameters: provael list-defenses --json)",
      },
    );
  }
  const [, id, key, value] = m as unknown as [string, string, string, string];
  let parsed: unknown = typedValue(value);
  if (/^[[{]/.test(value)) {
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new ProvaelError("config/invalid", `--defense-param ${id}.${key}: not JSON: ${value}`);
    }
  }
  return { ...previous, [id]: { ...(previous[id] ?? {}), [key]: parsed } };
}

/**
 * The plan's defenses from --defenses / --compare-defenses / --defense-param (absent when none,
 * so plans without defenses keep their digests); ids and params checked before anything runs.
 */
function defensePlanOf(flags: AttackFlags): { defenses?: DefensePlan } {
  const given = flags.defenseParam ?? {};
  if (flags.defenses && flags.compareDefenses) {
    throw new ProvaelError(
      "config/invalid",
      "--defenses and --compare-defenses exclude each other",
      {
        hint: "--defenses defends every arm; --compare-defenses plays every arm both ways",
      },
    );
  }
  const spec = flags.compareDefenses ?? flags.defenses;
  if (!spec) {
    if (Object.keys(given).length > 0)
      throw new ProvaelError(
        "config/invalid",
        "--defense-param without --defenses or --compare-defenses",
        {
          hint: "name the defenses the params are for",
        },
      );
    return {};
  }
  const ids = resolveDefenses(spec);
  const params: Record<string, Record<string, unknown>> = {};
  for (const id of Object.keys(given).sort()) {
    if (!ids.includes(id)) {
      throw new ProvaelError(
        "config/invalid",
        `--defense-param names '${id}', which is not a defense of this run`,
        { details: { defenses: ids } },
      );
    }
    resolveDefenseParams(id, given);
    const p = given[id] as Record<string, unknown>;
    params[id] = Object.fromEntries(
      Object.keys(p)
        .sort()
        .map((k) => [k, p[k]]),
    );
  }
  return { defenses: { ids, compare: flags.compareDefenses !== undefined, params } };
}

/** Flags that say what to play: with --from, the report says it, and these would contradict it. */
const PLAN_FLAGS = [
  "policy",
  "suite",
  "attacks",
  "tasks",
  "seeds",
  "seed",
  "repeats",
  "horizon",
  "termination",
  "scenePin",
  "multiplicity",
  "policyOption",
  "attackParam",
  "defenses",
  "compareDefenses",
  "defenseParam",
  "recipe",
  "allowCalibrationOverlap",
  "allowTrainingScenes",
] as const;

/** The plan of `--from FILE`, refusing flags that would change what it plays. */
function replayPlan(file: string, command: Command, policyPath?: string): PlanSpec {
  const given = PLAN_FLAGS.filter((k) => command.getOptionValueSource(k) === "cli");
  if (given.length > 0) {
    throw new ProvaelError(
      "config/invalid",
      `--from replays the plan ${file} recorded; ${given.map((k) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(", ")} would change it`,
      {
        details: { flags: given },
        hint: "drop those flags (the report holds them), or start a new run without --from",
      },
    );
  }
  // A report names weights by digest, not by path: the path is given again, and the run checks
  // the loaded weights against that digest.
  const plan = planFromReport(readReportFile(file, `--from ${file}`).report, file);
  return policyPath
    ? { ...plan, policy_options: { path: policyPath, ...plan.policy_options } }
    : plan;
}

function applyRecipe(flags: AttackFlags, recipe: Recipe, command: Command): AttackFlags {
  const merged: Record<string, unknown> = { ...flags };
  const explicit = (key: string) => command.getOptionValueSource(key) === "cli";
  for (const key of RECIPE_FLAG_KEYS) {
    const value = recipe[key];
    if (value !== undefined && !explicit(key)) merged[key] = value;
  }
  // Then the recipe's overrides for the suite the run ended up on: they shorten the no-flag
  // default only; a run that names its attacks or tasks plays what it named.
  const perSuite =
    explicit("attacks") || explicit("tasks") ? undefined : recipe.suites?.[String(merged.suite)];
  for (const [key, value] of Object.entries(perSuite ?? {})) {
    if (value !== undefined && !explicit(key)) merged[key] = value;
  }
  // Naming --tasks alone changes the attack set too: say which one and why.
  const shorter = recipe.suites?.[String(merged.suite)]?.attacks;
  if (explicit("tasks") && !explicit("attacks") && shorter)
    process.stderr.write(
      `provael: --tasks without --attacks: playing recipe ${recipe.name}'s attacks (${recipe.attacks.join(",")}), not its shorter set for ${String(merged.suite)} (${shorter.join(",")}), which applies only when neither --attacks nor --tasks is named; name --attacks to choose\n`,
    );
  return merged as unknown as AttackFlags;
}
