import { join } from "node:path";
import type { Command } from "commander";
import { attacks as attacksRegistry, resolveAttacks } from "../attacks/index.js";
import { loadAcceptance } from "../config/acceptance.js";
import { DEFAULTS } from "../config/defaults.js";
import { loadPlugins, pluginSource } from "../config/plugins.js";
import { loadRecipe, RECIPES, type Recipe } from "../config/recipes.js";
import { systemClock } from "../core/clock.js";
import { ProvaelError } from "../core/errors.js";
import { policies } from "../policies/index.js";
import type { Report } from "../report/build.js";
import { formatRate, waiverLines } from "../report/format.js";
import { displayOrder } from "../report/markdown.js";
import { procedureName } from "../report/significance.js";
import type { Verdict } from "../report/verdict.js";
import { type LoadedCalibration, loadCalibrations } from "../runner/calibration.js";
import { defaultWorkers } from "../runner/executor.js";
import type { PlanSpec, Termination, Waiver } from "../runner/plan.js";
import { planFromReport, readReportFile } from "../runner/replay.js";
import { parseShard, type RunOptions, runAttack } from "../runner/run.js";
import { suites } from "../suites/index.js";
import { EXIT } from "./exit.js";
import { choice, integer, list } from "./parse.js";
import { progressBar } from "./progress.js";
import { addServedPolicyFlags, type ServedFlags, servedPolicyOptions } from "./serve-policy.js";
import { textTable } from "./table.js";

interface AttackFlags extends ServedFlags {
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
  multiplicity: "holm" | "bh";
  concurrency: number;
  scenePin: number;
  out?: string;
  resume?: boolean;
  json?: boolean;
  maxErrors?: number;
  recipe: string;
  workers?: number;
  shard?: string;
  sarifOut?: string;
  html?: boolean;
  protocol?: string;
  calib?: string;
  requireCalibrated?: boolean;
  policyOption?: Record<string, ParamValue>;
  attackParam?: Record<string, Record<string, ParamValue>>;
  plugin?: string[];
  from?: string;
  policyPath?: string;
  policyUrl?: string;
}

function defaultOut(policy: string, suite: string): string {
  const stamp = new Date(systemClock.now())
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\..*/, "")
    .replace("T", "-");
  return join("runs", `${policy}-${suite}-${stamp}`);
}

/** The arms table printed at the end of a run. */
export function armsTable(report: Report): string {
  const rows = displayOrder(report).map((name) => {
    const a = report.arms[name];
    if (!a) return [name];
    const na = a.episodes - a.not_applicable === 0;
    return [
      a.role === "control" ? `  ${name}` : name,
      a.role,
      na ? "N/A" : formatRate(a.unsafe),
      na ? "N/A" : formatRate(a.task_success),
      String(a.errors),
      a.vs_baseline?.adjusted_p == null
        ? "—"
        : `${a.vs_baseline.adjusted_p < 0.001 ? "<0.001" : a.vs_baseline.adjusted_p.toFixed(3)}${a.vs_baseline.significant ? " *" : ""}`,
    ];
  });
  const rule = report.summary.significance;
  const table = textTable(
    ["arm", "role", "unsafe (95% Wilson)", "task success", "errors", "adjusted p"],
    rows,
  );
  return rule === null
    ? table
    : `${table}\nadjusted p: one-sided exact McNemar on pinned pairs, ${procedureName(rule.multiplicity)} across treatment arms; * significant at ${rule.alpha}`;
}

export function summaryLines(report: Report): string[] {
  const s = report.summary;
  return [
    ...waiverLines(report).map((l) => `warning: ${l}`),
    `attack success (treatment): ${formatRate(s.treatment_unsafe)}`,
    `benign floor (none):        ${formatRate(s.baseline_unsafe)}`,
    `controls:                   ${formatRate(s.control_unsafe)}`,
    `clean task success:         ${formatRate(s.clean_task_success)}`,
    ...(s.preliminary ? ["preliminary: fewer than 5 seeds"] : []),
  ];
}

export function registerAttack(program: Command): void {
  program
    .command("attack")
    .description("play tasks × arms × seeds episodes and write a run directory with report.json")
    .option("--policy <id>", "policy under test (provael list-policies)", DEFAULTS.policy)
    .option("--suite <id>", "suite to play (provael list-suites)", DEFAULTS.suite)
    .option(
      "--attacks <list>",
      "attacks or families, comma-separated (provael list-attacks)",
      list,
      [...DEFAULTS.attacks],
    )
    .option("--tasks <list>", "tasks to play, comma-separated (default: all of the suite's)", list)
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
      choice("--termination", ["fixed-horizon", "first-event"] as const),
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
      choice("--multiplicity", ["holm", "bh"] as const),
      "holm",
    )
    .option(
      "--scene-pin <n>",
      "scene offset: seed s plays scene (pin + s) mod N",
      integer("--scene-pin", { min: 0 }),
      DEFAULTS.scenePin,
    )
    .option("--policy-path <path>", "weights or model file for the policy")
    .option("--policy-url <url>", "server address for a served policy")
    .option("--out <dir>", "run directory (default: runs/<policy>-<suite>-<time>)")
    .option(
      "--resume",
      "finish the run in --out, skipping finished cells (errored cells are played again)",
    )
    .option(
      "--max-errors <n>",
      "abort the run once more than n episodes errored",
      integer("--max-errors", { min: 0 }),
    )
    .option("--json", "print a JSON summary instead of tables")
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
    .option("--policy-option <key=value>", "policy option, repeatable", keyValue, {})
    .option(
      "--attack-param <arm.key=value>",
      "an attack's parameter (budgets, bounds: see `provael list-attacks --json`), repeatable; e.g. gradient_patch.epsilon=32/255",
      attackParam,
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
    .action(async (raw: AttackFlags, command: Command) => {
      const recipe = loadRecipe(raw.recipe);
      // Plugins first: the flags below may name what they register.
      const pluginSources = [...(recipe.plugins ?? []), ...(raw.plugin ?? [])].map((p) =>
        pluginSource(p),
      );
      await loadPlugins(pluginSources);
      const flags = applyRecipe(raw, recipe, command);
      const suite = suites.get(flags.suite);
      policies.get(flags.policy);
      const arms = resolveAttacks(flags.attacks);
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
      const replay = raw.from ? replayPlan(raw.from, command) : null;
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
        scenePin: flags.scenePin,
        ...(flags.multiplicity === "bh" ? { multiplicity: "bh" as const } : {}),
        policyOptions,
        attackParams: checkAttackParams(flags.attackParam ?? {}, arms),
        calibration: Object.fromEntries(
          tasks.filter((t) => calibrations[t]).map((t) => [t, calibrations[t]?.digest as string]),
        ),
        ...waiversOf(flags),
      };
      const out = flags.out ?? defaultOut(plan.policy, plan.suite);
      const bar = progressBar(Boolean(process.stderr.isTTY) && !flags.json);
      const runOptions: RunOptions = {
        plan,
        out,
        resume: Boolean(flags.resume),
        concurrency: flags.concurrency,
        policyOptions: {
          ...(replay ? replay.policyOptions : policyOptions),
          ...(flags.policyUrl ? { url: flags.policyUrl } : {}),
          extra: {
            ...(replay ? (replay.policyOptions.extra as Record<string, unknown>) : extra),
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
        onProgress: (d, t) => bar.update(d, t),
        ...(pluginSources.length > 0 ? { plugins: pluginSources } : {}),
      };
      runOptions.finish = {
        html: flags.html !== false,
        protocol,
        ...(flags.sarifOut === undefined ? {} : { sarifOut: flags.sarifOut }),
        recipe: { name: recipe.name, source: RECIPES.includes(recipe) ? "built-in" : raw.recipe },
      };
      let result: Awaited<ReturnType<typeof runAttack>>;
      try {
        result = await runAttack(runOptions);
      } finally {
        bar.stop();
      }
      const verdict = result.verdict;
      if (result.alreadyComplete) {
        if (flags.json)
          process.stdout.write(
            `${JSON.stringify({ out, complete: true, played: 0, report_digest: result.reportDigest, verdict })}\n`,
          );
        else {
          process.stdout.write(
            `${out} is already complete; nothing to do (see ${join(out, "report.md")})\n`,
          );
          if (verdict) process.stdout.write(`${verdictLines(verdict)}\n`);
        }
        if (verdict) process.exitCode = verdictExitCode(verdict);
        return;
      }
      const report = result.report;
      if (!report) {
        process.stderr.write(
          `provael: run stopped with ${result.total - result.played} episode(s) left; finish it with --resume --out ${out}\n`,
        );
        process.exitCode = EXIT.incomplete;
        return;
      }
      if (flags.json) {
        process.stdout.write(
          `${JSON.stringify({ out, report_digest: result.reportDigest, played: result.played, summary: report.summary, arms: report.arms, verdict }, null, 2)}\n`,
        );
      } else {
        process.stdout.write(`\n${armsTable(report)}\n\n${summaryLines(report).join("\n")}\n\n`);
        if (verdict) process.stdout.write(`${verdictLines(verdict)}\n\n`);
        process.stdout.write(
          `wrote ${out}/report.json (${result.reportDigest}), report.md${flags.html === false ? "" : ", report.html"}, trajectories.jsonl, execution-manifest.json\n`,
        );
      }
      if (verdict) process.exitCode = verdictExitCode(verdict);
    });
  // Served and ONNX policy flags (--api-key, --layout, --io-map, --replan, --timeout, …).
  addServedPolicyFlags(program.commands.find((c) => c.name() === "attack") as Command);
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

type ParamValue = string | number | boolean;

/** A flag value: true/false, a number, a fraction like 16/255, or else the string itself. */
function typedValue(value: string): ParamValue {
  if (value === "true") return true;
  if (value === "false") return false;
  const fraction = /^(-?[0-9.]+(?:e-?[0-9]+)?)\/([0-9.]+(?:e-?[0-9]+)?)$/i.exec(value);
  if (fraction) {
    const q = Number(fraction[1]) / Number(fraction[2]);
    if (Number.isFinite(q)) return q;
  }
  return value !== "" && Number.isFinite(Number(value)) ? Number(value) : value;
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
      const issues = parsed.error.issues.map(
        (i) => `${i.path.join(".") || "(params)"}: ${i.message}`,
      );
      throw new ProvaelError(
        "config/invalid",
        `--attack-param for '${arm}' is not valid: ${issues.join("; ")}`,
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

/** Parses repeatable `key=value` options; numbers and booleans are typed. */
function keyValue(raw: string, previous: Record<string, ParamValue>) {
  const at = raw.indexOf("=");
  if (at <= 0) {
    throw new ProvaelError("config/invalid", `--policy-option needs key=value, got '${raw}'`, {
      hint: "e.g. --policy-option replan=2",
    });
  }
  const key = raw.slice(0, at);
  const value = raw.slice(at + 1);
  return { ...previous, [key]: typedValue(value) };
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
  "policyPath",
  "attackParam",
  "recipe",
  "allowCalibrationOverlap",
  "allowTrainingScenes",
] as const;

/** The plan of `--from FILE`, refusing flags that would change what it plays. */
function replayPlan(file: string, command: Command): PlanSpec {
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
  return planFromReport(readReportFile(file), file);
}

/** Keys a recipe may set; a flag given on the command line always wins. */
const RECIPE_KEYS = [
  "policy",
  "suite",
  "attacks",
  "tasks",
  "seeds",
  "seed",
  "repeats",
  "horizon",
  "termination",
  "concurrency",
] as const;

function applyRecipe(flags: AttackFlags, recipe: Recipe, command: Command): AttackFlags {
  const merged: Record<string, unknown> = { ...flags };
  const explicit = (key: string) => command.getOptionValueSource(key) === "cli";
  for (const key of RECIPE_KEYS) {
    const value = recipe[key];
    if (value !== undefined && !explicit(key)) merged[key] = value;
  }
  // Then the recipe's overrides for the suite the run ended up on.
  const perSuite = recipe.suites?.[String(merged.suite)];
  for (const [key, value] of Object.entries(perSuite ?? {})) {
    if (value !== undefined && !explicit(key)) merged[key] = value;
  }
  return merged as unknown as AttackFlags;
}

export function verdictLines(v: Verdict): string {
  const lines = [`verdict: ${v.verdict.toUpperCase()} under acceptance protocol '${v.protocol}'`];
  for (const c of v.criteria) lines.push(`  ${c.status.padEnd(10)} ${c.criterion}: ${c.reason}`);
  return lines.join("\n");
}

export function verdictExitCode(v: Verdict): number {
  return v.verdict === "pass" ? EXIT.ok : v.verdict === "fail" ? EXIT.fail : EXIT.incomplete;
}
