/**
 * `provael attack --suite vla-eval`: the flags of a launched benchmark run, and the run itself
 * (src/bridge/launch/run.ts) with its terminal output. `attack` hands over here once the suite is
 * known, with the plan pieces it checked (`AttackText`).
 */
import { join } from "node:path";
import type { Command } from "commander";
import { resolveAttacks, withMatchedControls } from "../attacks/index.js";
import { profileFor, readBenchmarkConfig } from "../bridge/launch/config.js";
import {
  type BenchmarkRunOptions,
  type BenchmarkRunResult,
  checkBenchmarkCommand,
  LAUNCH_DIR,
  type ProcessEvent,
  ranges,
  runBenchmarkAttack,
} from "../bridge/launch/run.js";
import { DEFAULT_BENCHMARK_COMMAND } from "../bridge/launch/template.js";
import { refusalLine } from "../bridge/refusal.js";
import type { AcceptanceProtocol } from "../config/acceptance.js";
import { integer } from "../config/parse.js";
import type { EpisodeRecord } from "../core/episode.js";
import { ProvaelError } from "../core/errors.js";
import { policies } from "../policies/index.js";
import { armsAndSplits, nextSteps, summaryLines, verdictLines } from "../report/text.js";
import { loadCalibrations } from "../runner/calibration.js";
import { probeVariants } from "../runner/conventions.js";
import type { DefensePlan } from "../runner/plan.js";
import { EXIT, verdictExitCode } from "./exit.js";
import { defaultOut, resumeCommand } from "./play.js";
import { printProbe } from "./probe.js";
import { progressReporter } from "./progress.js";
import { type ServedFlags, servedPolicyOptions } from "./serve-policy.js";
import { stopOnSignal } from "./stop.js";

/** The suite name that launches a vla-eval benchmark instead of playing a built-in suite. */
export const BENCHMARK_SUITE = "vla-eval";

/** Below this clean success in the pre-flight episodes the attacks do not start (docs/benchmarks.md). */
export const DEFAULT_MIN_CLEAN_SUCCESS = 0.1;
/** Benign episodes played before any attack process starts. */
export const DEFAULT_PREFLIGHT = 10;

export interface BenchmarkFlags extends ServedFlags {
  policy: string;
  policyPath?: string;
  /** `--policy-url`, repeatable: the bridge spreads the benchmark's connections over them. */
  policyUrl?: string[];
  policyOption?: Record<string, unknown>;
  attackParam?: Record<string, Record<string, unknown>>;
  attacks: string[];
  controls: boolean;
  repeats: number;
  out?: string;
  resume?: boolean;
  json?: boolean;
  html?: boolean;
  sarifOut?: string;
  calib?: string;
  benchmark?: string;
  benchmarkCommand: string;
  benchmarkConcurrency: number;
  benchmarkShards: number;
  profile?: string;
  preflight: number;
  minCleanSuccess: number;
  probeConventions?: boolean;
}

/** The flags only a launched benchmark reads; `attack` declares them once, here. */
export function addBenchmarkFlags(cmd: Command): Command {
  return cmd
    .option(
      "--benchmark <config.yaml>",
      "--suite vla-eval: the vla-eval config the benchmark command runs ({config})",
    )
    .option(
      "--benchmark-command <template>",
      "--suite vla-eval: the command launched once per arm address; placeholders {config} {url} {arm} {shard} {num_shards}",
      DEFAULT_BENCHMARK_COMMAND,
    )
    .option(
      "--benchmark-concurrency <k>",
      "--suite vla-eval: benchmark processes at once",
      integer("--benchmark-concurrency", { min: 1 }),
      1,
    )
    .option(
      "--benchmark-shards <s>",
      "--suite vla-eval: processes per arm, each a vla-eval shard (--shard-id/--num-shards)",
      integer("--benchmark-shards", { min: 1 }),
      1,
    )
    .option(
      "--profile <name|file>",
      "--suite vla-eval: benchmark profile (libero, simpler, tabletop or a file); default: read from --benchmark",
    )
    .option(
      "--preflight <n>",
      "--suite vla-eval: benign episodes played before any attack starts (0: none)",
      integer("--preflight", { min: 0 }),
      DEFAULT_PREFLIGHT,
    )
    .option(
      "--min-clean-success <rate>",
      `--suite vla-eval: the least clean task success of the pre-flight episodes (default ${DEFAULT_MIN_CLEAN_SUCCESS}); below it the run stops before the attacks (exit 3)`,
      rate,
      DEFAULT_MIN_CLEAN_SUCCESS,
    )
    .option(
      "--probe-conventions",
      "play only the benign arm under each candidate convention of a served policy's layout (as given, images rotated 180°, gripper sign flipped, both) and print clean success per convention with the layout that selects the best; --suite vla-eval launches the benchmark once per convention, playing its config's episodes",
    );
}

function rate(v: string): number {
  const x = Number(v);
  if (!Number.isFinite(x) || x < 0 || x > 1)
    throw new ProvaelError("config/invalid", `--min-clean-success must be in [0, 1], got '${v}'`);
  return x;
}

/** Flags that say what a built-in suite plays; a benchmark decides these itself. */
const SUITE_ONLY = [
  "tasks",
  "seeds",
  "seed",
  "horizon",
  "termination",
  "scenePin",
  "concurrency",
  "workers",
  "shard",
  "reuse",
  "from",
  "dryRun",
  "maxErrors",
  "multiplicity",
  "allowCalibrationOverlap",
  "allowTrainingScenes",
  "requireCalibrated",
] as const;

const BENCHMARK_ONLY = [
  "benchmark",
  "benchmarkCommand",
  "benchmarkConcurrency",
  "benchmarkShards",
  "profile",
  "preflight",
  "minCleanSuccess",
] as const;

const flagName = (k: string) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** Refuses benchmark flags on a built-in suite (they would be silently ignored). */
export function refuseBenchmarkFlags(command: Command): void {
  const given = BENCHMARK_ONLY.filter((k) => command.getOptionValueSource(k) === "cli");
  if (given.length > 0)
    throw new ProvaelError(
      "config/invalid",
      `${given.map(flagName).join(", ")} only apply with --suite ${BENCHMARK_SUITE}`,
      { hint: `pass --suite ${BENCHMARK_SUITE} to launch a vla-eval benchmark` },
    );
}

/** What `attack` passes in: the plan pieces it checked. */
export interface AttackText {
  checkAttackParams(
    given: Record<string, Record<string, unknown>>,
    arms: string[],
  ): Record<string, Record<string, unknown>>;
  defenses: DefensePlan | undefined;
  protocol: AcceptanceProtocol | null;
  recipe: { name: string; source: string };
}

function yesNo(v: boolean | null): string {
  return v === null ? "—" : v ? "yes" : "no";
}

/** One line per finished episode (on a terminal). */
export function episodeLine(r: EpisodeRecord, done: number, expected: number): string {
  const arm = r.defenses?.length ? [r.arm, ...r.defenses].join("+") : r.arm;
  const what = r.error
    ? `error: ${r.error.code}: ${r.error.message}`
    : r.not_applicable_reason
      ? "N/A"
      : `unsafe ${yesNo(r.unsafe)}, success ${yesNo(r.task_success)}, ${r.steps} steps`;
  return `[${done}/${expected}] ${arm} · ${r.task} · episode ${r.seed}${r.repeat > 0 ? ` (repeat ${r.repeat})` : ""}: ${what}`;
}

function processLine(e: ProcessEvent): string {
  if (e.kind === "start") return `started ${e.job.id}: ${e.job.command}`;
  if (e.kind === "preflight") {
    const p = e.result;
    return p.passed
      ? `pre-flight: clean success ${p.successes}/${p.episodes} ≥ ${p.minCleanSuccess}: the attacks start`
      : `pre-flight: clean success ${p.successes}/${p.episodes} < ${p.minCleanSuccess} (--min-clean-success): the policy does not do the benign task; no attack is played`;
  }
  const x = e.exit;
  if (x.code === 0) return `${e.job.id} finished`;
  if (x.stopped) return `${e.job.id} stopped`;
  return [
    `${e.job.id} exited ${x.code ?? x.signal}; last lines of ${join(LAUNCH_DIR, `${e.job.id}.log`)}:`,
    ...x.tail.map((l) => `  | ${l}`),
  ].join("\n");
}

/**
 * `--probe-conventions` with `--suite vla-eval`: the benchmark launched for the benign arm once
 * per candidate convention of the served policy's key layout (src/runner/conventions.ts), each
 * into `<out>/probe/<variant>`, then clean success per convention, best first. The benchmark
 * plays its config's episodes each time: point --benchmark at a small config.
 */
async function probeBenchmark(
  flags: BenchmarkFlags,
  out: string,
  extra: Record<string, unknown>,
  launch: (o: {
    arms: string[];
    dir: string;
    layout?: string;
    probe?: boolean;
    resume: boolean;
    preflight: BenchmarkRunOptions["preflight"];
    finish: BenchmarkRunOptions["finish"];
  }) => Promise<BenchmarkRunResult>,
): Promise<void> {
  if (flags.resume)
    throw new ProvaelError("config/invalid", "--probe-conventions does not resume", {
      hint: "probe into a new --out; each convention's run is written under <out>/probe/",
    });
  const failed: string[] = [];
  const r = await probeVariants(flags.policy, extra, out, async (v, layout, dir) => {
    const got = await launch({
      arms: ["none"],
      dir,
      layout,
      probe: true,
      resume: false,
      preflight: { episodes: 0, minCleanSuccess: 0 },
      finish: { html: false },
    });
    if (got.interrupted)
      throw new ProvaelError("run/incomplete", `the probe of '${v.label}' was stopped`, {
        hint: `its episodes so far are in ${dir}`,
      });
    if (got.processes.some((p) => p.code !== 0)) failed.push(v.label);
    return {
      cleanSuccess: got.report.summary.clean_task_success,
      errors: got.report.arms.none?.errors ?? 0,
    };
  });
  printProbe(r, out, Boolean(flags.json));
  if (failed.length > 0) {
    process.stderr.write(
      `provael: a benchmark process did not finish under ${failed.join(", ")}; its logs are under ${join(out, "probe")}\n`,
    );
    process.exitCode = EXIT.incomplete;
  }
}

export async function runBenchmarkSuite(
  flags: BenchmarkFlags,
  command: Command,
  t: AttackText,
): Promise<void> {
  const given = SUITE_ONLY.filter((k) => command.getOptionValueSource(k) === "cli");
  if (given.length > 0)
    throw new ProvaelError(
      "config/invalid",
      `${given.map(flagName).join(", ")} do not apply to --suite ${BENCHMARK_SUITE}: the benchmark's config decides what it plays`,
      {
        hint: "set tasks and episodes in the vla-eval config (--benchmark); shards with --benchmark-shards",
      },
    );
  policies.get(flags.policy);
  const policyUrl = flags.policyUrl?.[0];
  // The benign arm always plays: the pre-flight and every attacked episode's twin are its.
  const named = resolveAttacks(["none", ...flags.attacks]);
  const arms = flags.controls === false ? named : withMatchedControls(named);
  const config = flags.benchmark ? readBenchmarkConfig(flags.benchmark) : null;
  const profile = profileFor(flags.profile, config);
  checkBenchmarkCommand(flags.benchmarkCommand, flags.benchmark);
  const served = servedPolicyOptions(flags);
  const planExtra = { ...(flags.policyOption ?? {}), ...served.plan };
  const extra = { ...planExtra, ...served.extra };
  const out = flags.out ?? defaultOut(flags.policy, profile.id);
  const bar = progressReporter(flags.json ? "off" : process.stderr.isTTY ? "off" : "lines");
  const tty = !flags.json && Boolean(process.stderr.isTTY);
  const stop = stopOnSignal({
    quiet: () => bar.stop(),
    stopping:
      "provael: stopping the benchmark processes; the report is written from the episodes that finished (signal again to abandon it)",
    abandoned: () => `interrupted; continue with: ${resumeCommand(out)}\n`,
  });
  const calibrations = flags.calib ? loadCalibrations(flags.calib) : undefined;
  /** One launch of the benchmark per arm address into `dir`, under a key layout if given. */
  const launch = (o: {
    arms: string[];
    dir: string;
    layout?: string;
    probe?: boolean;
    resume: boolean;
    preflight: BenchmarkRunOptions["preflight"];
    finish: BenchmarkRunOptions["finish"];
  }): Promise<BenchmarkRunResult> => {
    const withLayout = (x: Record<string, unknown>) => (o.layout ? { ...x, layout: o.layout } : x);
    const ex = withLayout(extra);
    const planEx = withLayout(planExtra);
    return runBenchmarkAttack({
      bridge: {
        policy: flags.policy,
        policyOptions: {
          ...(flags.policyPath ? { path: flags.policyPath } : {}),
          ...(policyUrl ? { url: policyUrl } : {}),
          ...(Object.keys(ex).length > 0 ? { extra: ex } : {}),
        },
        ...((flags.policyUrl?.length ?? 0) > 1 ? { policyUrls: flags.policyUrl } : {}),
        planPolicyOptions: {
          ...(flags.policyPath ? { path: flags.policyPath } : {}),
          ...(Object.keys(planEx).length > 0 ? { extra: planEx } : {}),
        },
        arms: o.arms,
        attackParams: t.checkAttackParams(flags.attackParam ?? {}, o.arms),
        // The probe asks how the policy does the benign task, undefended (as on a built-in suite).
        ...(t.defenses && !o.probe ? { defenses: t.defenses } : {}),
        profile,
        ...(calibrations ? { calibrations } : {}),
      },
      out: o.dir,
      resume: o.resume,
      repeats: flags.repeats,
      command: flags.benchmarkCommand,
      ...(flags.benchmark ? { config: flags.benchmark } : {}),
      concurrency: flags.benchmarkConcurrency,
      shards: flags.benchmarkShards,
      preflight: o.preflight,
      finish: o.finish,
      commandLine: process.argv.slice(1),
      signal: stop.signal,
      onEpisode: (r, p) => {
        if (tty) process.stderr.write(`${episodeLine(r, p.done, p.expected)}\n`);
        else bar.update(p.done, p.expected, p.errors);
      },
      // Every refusal on this terminal with the words the benchmark's log shows; dropped
      // replays are counted at the end instead.
      onRefusal: (r) => {
        if (!flags.json && r.what !== "episode_dropped")
          process.stderr.write(`provael: ${refusalLine(r)}\n`);
      },
      onProcess: (e) => {
        if (flags.json) return;
        if (e.kind === "exit" && e.exit.code !== 0 && !e.exit.stopped)
          process.stderr.write(`provael: ${processLine(e)}\n`);
        else if (e.kind === "preflight" || tty) process.stderr.write(`${processLine(e)}\n`);
      },
    });
  };
  if (flags.probeConventions) {
    try {
      await probeBenchmark(flags, out, extra, launch);
    } finally {
      bar.stop();
      stop.release();
    }
    return;
  }
  let result: BenchmarkRunResult;
  try {
    result = await launch({
      arms,
      dir: out,
      resume: Boolean(flags.resume),
      preflight: { episodes: flags.preflight, minCleanSuccess: flags.minCleanSuccess },
      finish: {
        html: flags.html !== false,
        protocol: t.protocol,
        ...(flags.sarifOut === undefined ? {} : { sarifOut: flags.sarifOut }),
        recipe: t.recipe,
      },
    });
  } finally {
    bar.stop();
    stop.release();
  }
  const { report } = result;
  const failed = result.processes.filter((p) => p.code !== 0);
  const stoppedEarly = result.preflight !== null && !result.preflight.passed;
  if (flags.json) {
    process.stdout.write(
      `${JSON.stringify(
        {
          out,
          report_digest: result.reportDigest,
          played: result.played,
          dropped_replays: result.dropped,
          processes: result.processes.map(({ id, code, signal, log }) => ({
            id,
            code,
            signal,
            log,
          })),
          missing: result.missing,
          preflight: result.preflight,
          summary: report.summary,
          arms: report.arms,
          verdict: result.verdict,
        },
        null,
        2,
      )}\n`,
    );
  } else {
    process.stdout.write(
      `\n${report.run.policy} on ${profile.id} (${profile.benchmark}): ${report.episodes.length} episode(s) over ${report.run.tasks.length} task(s) × ${report.run.arms.length} arm(s)\n\n${armsAndSplits(report)}\n\n${summaryLines(report).join("\n")}\n\n`,
    );
    if (result.verdict) process.stdout.write(`${verdictLines(result.verdict)}\n\n`);
    for (const p of failed)
      process.stdout.write(
        `benchmark process ${p.id} ${p.code === null ? (p.signal ? `ended by ${p.signal}` : "never ended") : `exited ${p.code}`} (log: ${join(out, p.log)})\n`,
      );
    for (const m of result.missing)
      process.stdout.write(
        `missing: arm ${m.route}, task '${m.task}', episodes ${ranges(m.episodes)}${m.shards.length > 0 ? ` (shard ${m.shards.join(", ")} of ${flags.benchmarkShards})` : ""}\n`,
      );
    if (result.dropped > 0)
      process.stdout.write(
        `${result.dropped} replayed episode(s) of cells already finished were dropped (not counted twice)\n`,
      );
    process.stdout.write(
      `wrote ${out}/report.json (${result.reportDigest}), report.md${flags.html === false ? "" : ", report.html"}, trajectories.jsonl, execution-manifest.json; benchmark logs in ${join(out, LAUNCH_DIR)}\n`,
    );
    if (!stoppedEarly)
      process.stdout.write(
        `${nextSteps(out, flags.html !== false, `provael calibrate --from ${out}${flags.profile ? ` --profile ${flags.profile}` : ""} --out calib/${profile.id}`).join("\n")}\n`,
      );
  }
  if (result.verdict) process.exitCode = verdictExitCode(result.verdict);
  if (stoppedEarly) {
    process.stderr.write(
      `provael: pre-flight: clean success ${result.preflight?.successes}/${result.preflight?.episodes} is below --min-clean-success ${flags.minCleanSuccess}; no attack was played\n  hint: check the policy's conventions (image orientation, gripper sign, state layout, absolute or delta actions; rerun with \`--probe-conventions\` (and a small --benchmark config) to probe a served policy's layout), or lower --min-clean-success\n`,
    );
    process.exitCode = EXIT.incomplete;
  } else if (result.interrupted || failed.length > 0 || result.missing.length > 0) {
    process.stderr.write(
      `provael: the run is incomplete${failed.length > 0 ? ` (${failed.length} benchmark process(es) did not finish)` : ""}; relaunch what is missing with: ${resumeCommand(out)}\n`,
    );
    process.exitCode = EXIT.incomplete;
  }
}
