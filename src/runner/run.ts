/**
 * A run: plan → cells → episodes (journalled as they finish) → report, trajectories, markdown
 * and manifest. The report depends only on the plan and the episodes, never on the number of
 * concurrent episodes, their completion order, or whether the run was resumed.
 */

import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { attacks } from "../attacks/index.js";
import { resolveParams } from "../attacks/params.js";
import { loadPlugins, type PluginRecord, type PluginSource } from "../config/plugins.js";
import { canonicalJson } from "../core/canonical-json.js";
import { type Clock, systemClock } from "../core/clock.js";
import { sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import { redactPolicyOptions, redactText, secretValues } from "../core/redact.js";
import type { Attack, Policy, PolicyOptions, ServedModel, Suite } from "../core/types.js";
import type { DefenseTiming } from "../defenses/chain.js";
import { resolveDefenseParams, resolveDefenses } from "../defenses/index.js";
import { type LoadedCalibration, provenanceFor, sceneFor } from "../kernel/index.js";
import { policies } from "../policies/index.js";
import type { Report } from "../report/build.js";
import { decide, type Verdict } from "../report/verdict.js";
import { isCommitted } from "../rundir/commit.js";
import { checkOutputDir, RUN_FILES, removeTempFiles } from "../rundir/files.js";
import { claimRunDir, LOCK_FILE, type RunLock } from "../rundir/lock.js";
import { readReportFile } from "../rundir/report.js";
import { suites } from "../suites/index.js";
import { checkWithPolicy, notApplicableReason } from "./preflight.js";

export { checkWithPolicy, notApplicableReason } from "./preflight.js";

import { checkFinishOptions, type FinishOptions } from "../report/finalize.js";
import {
  type FinishedCell,
  type JournalEntry,
  JournalWriter,
  journalHeader,
  latestPerCell,
  scanJournal,
} from "../rundir/journal.js";
import {
  type Executor,
  type ExecutorSetup,
  inProcessExecutor,
  probePolicy,
  workerExecutor,
} from "./executor.js";
import { writeRunOutputs } from "./outputs.js";
import {
  type Cell,
  isRecordOf,
  type PlanSpec,
  planCells,
  planDifferences,
  planDigest,
  validatePlan,
} from "./plan.js";
import { DEFAULT_INFRA_RETRIES, poolExecutor } from "./pool.js";
import {
  checkReusedPolicy,
  copyReused,
  openReused,
  type ReusedRun,
  type ReuseRecord,
  reusableCells,
} from "./reuse.js";

export interface RunOptions {
  plan: PlanSpec;
  out: string;
  resume: boolean;
  concurrency: number;
  policyOptions: PolicyOptions;
  commandLine: string[];
  clock?: Clock;
  /** Finished cells, all cells, and episodes of this invocation that errored. */
  onProgress?: (done: number, total: number, errors: number) => void;
  /** When aborted, no new episode starts; those in flight finish and are journalled. */
  signal?: AbortSignal;
  /** Stop after this many new episodes (tests of crash and resume). */
  maxEpisodes?: number;
  /** Abort the run once more than this many episodes of this invocation errored. */
  maxErrors?: number;
  /** On resume, play cells whose journalled episode errored again (default true). */
  retryErrors?: boolean;
  /**
   * A served policy's servers (`--policy-url`, repeatable): episodes spread over them,
   * `concurrency` per server (runner/pool.ts). Absent: `policyOptions.url` alone, no pool.
   */
  policyUrls?: string[];
  /** Times a cell lost to an infrastructure error is played again on the pool (`--retry-errors`). */
  infraRetries?: number;
  /** Calibrations by task (their digests must equal `plan.calibration`). */
  calibrations?: Record<string, LoadedCalibration>;
  /** Refuse any task scored by a suite-default predicate. */
  requireCalibrated?: boolean;
  /** Worker threads for CPU-bound in-process policies (1: play in this thread). */
  workers?: number;
  /** Play only this slice of the plan. */
  shard?: Shard | null;
  /** Plugin files to load and record (see `pluginSource`); `plan.plugins` is filled from them. */
  plugins?: PluginSource[];
  /**
   * Earlier runs of this plan with other `seeds` whose finished episodes are copied instead of
   * played (`--reuse`; runner/reuse.ts).
   */
  reuse?: string[];
  /** report.html, the verdict, SARIF and the recipe: written with the run's other outputs. */
  finish?: FinishOptions;
}

export interface RunResult {
  out: string;
  report: Report | null;
  reportDigest: string | null;
  /** Episodes played by this invocation (0 when a resume found the run already complete). */
  played: number;
  /** Finished episodes this invocation copied from `reuse` runs instead of playing. */
  copied: number;
  total: number;
  alreadyComplete: boolean;
  /**
   * The verdict under `finish.protocol`, decided again from report.json on every invocation
   * (an already complete run included), so a retried run exits as the first one would have.
   */
  verdict: Verdict | null;
}

/** Refuses to touch a directory that holds results, unless resuming a matching plan. */
function prepareOut(
  out: string,
  plan: PlanSpec,
  resume: boolean,
  shard: string | null,
): { existing: ReturnType<typeof scanJournal> | null; lock: RunLock } {
  checkOutputDir(out, "--out");
  const { lock, entries } = claimRunDir(out, "--out", "provael attack");
  try {
    return { existing: entries ? openExisting(out, entries, plan, resume, shard) : null, lock };
  } catch (e) {
    lock.release();
    throw e;
  }
}

function openExisting(
  out: string,
  entries: string[],
  plan: PlanSpec,
  resume: boolean,
  shard: string | null,
  tidy = true,
): ReturnType<typeof scanJournal> | null {
  const journalPath = join(out, RUN_FILES.journal);
  if (entries.includes(RUN_FILES.journal)) {
    // Finished means committed: report.json alone may be the first output of a killed finalisation.
    const finished = isCommitted(out);
    if (!resume) {
      throw new ProvaelError(
        "run/out-exists",
        `${out} already holds a ${finished ? "finished" : "partial"} run`,
        {
          details: { out, finished },
          hint: finished
            ? "choose another --out; finished results are never overwritten"
            : "pass --resume to finish it, or choose another --out",
        },
      );
    }
    const existing = scanJournal(journalPath);
    const diffs = planDifferences(existing.header.plan, plan);
    if (diffs.length > 0 || existing.header.plan_digest !== planDigest(plan)) {
      throw new ProvaelError(
        "run/plan-mismatch",
        `cannot resume ${out}: the journal was written for another plan (${diffs.join("; ")})`,
        {
          details: { differences: diffs },
          hint: "rerun with the original flags, or choose another --out",
        },
      );
    }
    if (existing.header.shard !== shard) {
      throw new ProvaelError(
        "run/plan-mismatch",
        `cannot resume ${out}: it holds shard ${existing.header.shard ?? "(none: the whole plan)"}, not ${shard ?? "the whole plan"}`,
        {
          hint: "resume with the same --shard",
        },
      );
    }
    if (tidy) removeTempFiles(out);
    return existing;
  }
  if (entries.length > 0) {
    throw new ProvaelError("run/out-exists", `${out} is not empty and holds no Provael run`, {
      details: { out, entries: entries.slice(0, 5) },
      hint: "choose an empty or new --out directory",
    });
  }
  return null;
}

/** A slice of the plan: `--shard k/N` plays cells k, k+N, k+2N, … of the canonical order. */
export interface Shard {
  index: number;
  count: number;
}

export function parseShard(raw: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(raw.trim());
  const index = Number(m?.[1]);
  const count = Number(m?.[2]);
  if (!m || !(count >= 1) || !(index >= 0 && index < count)) {
    throw new ProvaelError("config/invalid", `--shard must be k/N with 0 ≤ k < N, got '${raw}'`, {
      hint: "e.g. --shard 0/3, --shard 1/3 and --shard 2/3 for three machines",
    });
  }
  return { index, count };
}

export const shardLabel = (s: Shard | null | undefined) => (s ? `${s.index}/${s.count}` : null);

/**
 * The plan with the loaded plugins recorded. A plan that already names plugins (a replay, or a
 * library caller that filled it) must name exactly the loaded files.
 */
function withPlugins(plan: PlanSpec, plugins: PluginRecord[]): PlanSpec {
  const loaded = plugins.map(({ file, digest }) => ({ file, digest }));
  if (plan.plugins !== undefined && canonicalJson(plan.plugins) !== canonicalJson(loaded)) {
    throw new ProvaelError(
      "run/plan-mismatch",
      "the plan names other plugin files than the ones loaded",
      {
        details: { plan: plan.plugins, loaded },
        hint: "load the plugin files the plan was made with (same names and bytes)",
      },
    );
  }
  if (loaded.length === 0) {
    const { plugins: _, ...rest } = plan;
    return rest;
  }
  return { ...plan, plugins: loaded };
}

/**
 * Runs (or resumes) a plan, or one shard of it, into `out`: prepare (check the plan, open the
 * directory, find the cells left), schedule (probe the policy, play the cells into the journal)
 * and finalise (write every output, then the commit point).
 */
export async function runAttack(options: RunOptions): Promise<RunResult> {
  const prepared = await prepare(options);
  if ("alreadyComplete" in prepared) return prepared;
  try {
    const played = await schedule(options, prepared);
    if (prepared.done.size < prepared.cells.length) {
      return {
        out: options.out,
        report: null,
        reportDigest: null,
        played: played.played,
        copied: copiedOf(played.reuse),
        total: prepared.cells.length,
        alreadyComplete: false,
        verdict: null,
      };
    }
    return await finalise(options, prepared, played);
  } finally {
    prepared.lock.release();
  }
}

/** What `prepare` hands on: the checked plan, the directory's state and the cells left. */
interface Prepared extends CheckedPlan {
  clock: Clock;
  startedAt: number;
  shard: Shard | null;
  existing: ReturnType<typeof scanJournal> | null;
  /** This process's hold on the run directory, let go once the run is finalised. */
  lock: RunLock;
  cells: Cell[];
  journalPath: string;
  /** Finished cells: their records and where their lines sit in the journal. */
  done: Map<string, FinishedCell>;
  pending: Cell[];
  /** Runs whose finished episodes are copied in rather than played (checked, not yet copied). */
  reused: ReusedRun[];
}

/** What `schedule` played. */
interface Played {
  played: number;
  workers: number;
  policyDigest: string | null;
  /** A served policy: the model its server reported. */
  servedModel: ServedModel | null;
  /** Wall-clock time in the defenses' hooks, per arm, over the episodes played. */
  latency: Record<string, DefenseLatency>;
  /** Episodes copied from each reused run by this invocation. */
  reuse: ReuseRecord[];
  /** A pool of policy servers: what it played where (execution manifest only). */
  pool: Record<string, unknown> | null;
}

/** What `checkPlan` hands on: the plan as it will be recorded, and what it names, loaded. */
export interface CheckedPlan {
  pluginSources: PluginSource[];
  /** Values never written (API keys, secret options, URL passwords). */
  secrets: string[];
  plan: PlanSpec;
  suite: Suite;
  policy: Policy;
  armAttacks: Attack<unknown>[];
  calibrations: Record<string, LoadedCalibration>;
  finish: FinishOptions;
}

/**
 * The checks a run makes before it opens its directory (plugins, counts, names, the plan, the
 * attacks' params, defenses, calibrations, finishing options); `--dry-run` makes the same ones.
 */
export async function checkPlan(options: RunOptions): Promise<CheckedPlan> {
  const pluginSources = options.plugins ?? [];
  const plugins = await loadPlugins(pluginSources);
  // Secrets (API keys, secret options, URL passwords) are used to play, never written: the plan
  // is recorded with them redacted, and episode errors are scrubbed of them.
  const secrets = [
    ...secretValues(options.policyOptions, process.env),
    ...secretValues(options.plan.policy_options, process.env),
  ];
  const given = withPlugins(options.plan, plugins);
  const plan: PlanSpec = {
    ...given,
    policy_options: redactPolicyOptions(given.policy_options),
  };
  for (const [flag, v, min] of [
    ["--concurrency", options.concurrency, 1],
    ["--workers", options.workers ?? 1, 1],
    ["--retry-errors", options.infraRetries ?? 0, 0],
  ] as const) {
    if (!Number.isInteger(v) || v < min) {
      throw new ProvaelError("config/invalid", `${flag} must be an integer ≥ ${min}, got ${v}`, {
        hint: `pass ${flag} ${min} or more`,
      });
    }
  }
  const suite = suites.get(plan.suite);
  const policy = policies.get(plan.policy);
  const armAttacks = plan.arms.map((a) => attacks.get(a));
  if (plan.arms.length === 0) throw new ProvaelError("config/invalid", "the attack list is empty");
  validatePlan(
    plan,
    suite.tasks().map((t) => t.id),
  );
  for (const a of armAttacks) resolveParams(a, plan.attack_params);
  checkDefensePlan(plan);
  const calibrations = options.calibrations ?? {};
  checkCalibrations(plan, calibrations, options.requireCalibrated ?? false);
  const finish = options.finish ?? {};
  checkFinishOptions(finish);

  return { pluginSources, secrets, plan, suite, policy, armAttacks, calibrations, finish };
}

/**
 * Checks the plan and its options, opens (or reopens) the run directory and finds the cells
 * left to play; a committed run answers its result at once, never replayed or rewritten.
 */
async function prepare(options: RunOptions): Promise<Prepared | RunResult> {
  const clock = options.clock ?? systemClock;
  const startedAt = clock.now();
  const checked = await checkPlan(options);
  const { plan, finish } = checked;
  const shard = options.shard ?? null;

  const { existing, lock } = prepareOut(options.out, plan, options.resume, shardLabel(shard));
  // The lock is held until the run is finalised (runAttack), or let go here on any way out.
  try {
    const cells = planCells(plan).filter((_, i) => !shard || i % shard.count === shard.index);
    if (existing) checkJournalCells(options.out, existing.entries, cells, shardLabel(shard));
    const journalPath = join(options.out, RUN_FILES.journal);
    // Finished cells: their records and where their lines sit in the journal (trajectories stay on disk).
    // A later journal line for a cell supersedes an errored one (a retry); errored cells are
    // played again on resume, since their error may have been transient (a server that was down).
    const done = new Map<string, FinishedCell>(latestPerCell(existing?.entries ?? []));
    if (options.retryErrors ?? true) {
      for (const [cell, e] of done) if (e.record.error !== null) done.delete(cell);
    }
    const pending = cells.filter((c) => !done.has(c.id));
    const reused = options.reuse?.length ? openReused(options.reuse, plan, options.out) : [];

    // A committed run is never replayed or rewritten, errored cells included; its verdict is
    // decided again from its report so that the exit code is the first invocation's.
    if (existing && isCommitted(options.out)) {
      lock.release();
      const { report, bytes } = readReportFile(join(options.out, RUN_FILES.report));
      return {
        out: options.out,
        report,
        reportDigest: sha256(bytes),
        played: 0,
        copied: 0,
        total: cells.length,
        alreadyComplete: true,
        verdict: finish.protocol ? decide(report, finish.protocol) : null,
      };
    }
    return {
      ...checked,
      clock,
      startedAt,
      shard,
      existing,
      cells,
      journalPath,
      done,
      pending,
      reused,
      lock,
    };
  } catch (e) {
    lock.release();
    throw e;
  }
}

/** What `--dry-run` found: the plan as a run would record it, and the cells it would play. */
export interface DryRun {
  plan: PlanSpec;
  cells: Cell[];
  /** Finished episodes `reuse` would copy in (checked as a run checks them). */
  reused: number;
  /** Cells already finished in `out` (a resume). */
  done: number;
  policyDigest: string | null;
}

/**
 * Every check a run makes before its first episode, in the same order, touching nothing: the
 * plan and its options, the run directory (read, never locked or tidied), the reused runs, the
 * policy's probe (a served policy must answer), and what needs the loaded policy (pairing,
 * defenses, calibrations, training, replayed and calibration scenes). A plan this accepts is one
 * the run accepts; one it refuses, the run refuses with the same error.
 */
export async function dryRunAttack(options: RunOptions): Promise<DryRun> {
  const checked = await checkPlan(options);
  const { plan } = checked;
  const shard = options.shard ?? null;
  checkOutputDir(options.out, "--out");
  const entries = existsSync(options.out)
    ? readdirSync(options.out).filter((e) => !e.startsWith(LOCK_FILE))
    : [];
  const existing =
    entries.length > 0
      ? openExisting(options.out, entries, plan, options.resume, shardLabel(shard), false)
      : null;
  const cells = planCells(plan).filter((_, i) => !shard || i % shard.count === shard.index);
  if (existing) checkJournalCells(options.out, existing.entries, cells, shardLabel(shard));
  const done = new Set([...latestPerCell(existing?.entries ?? [])].map(([c]) => c));
  const reused = options.reuse?.length ? openReused(options.reuse, plan, options.out) : [];
  const probe = await probePolicy(plan, options.policyOptions);
  checkReusedPolicy(reused, probe.digest, servedModelLabel(probe.servedModel ?? undefined), (h) =>
    servedModelLabel(h.served_model),
  );
  checkWithPolicy(options, checked, probe);
  const pending = cells.filter((c) => !done.has(c.id));
  return {
    plan,
    cells,
    reused: reused.length > 0 ? reusableCells(reused, pending) : 0,
    done: cells.length - pending.length,
    policyDigest: probe.digest,
  };
}

/** Probes the policy, checks what needs it, and plays the pending cells into the journal. */
async function schedule(options: RunOptions, p: Prepared): Promise<Played> {
  const { plan, suite, policy, armAttacks, calibrations, existing, done, cells } = p;
  const { journalPath, shard, secrets, pluginSources, reused } = p;
  const probe = await probePolicy(plan, options.policyOptions);
  const policyDigest = probe.digest;
  if (existing && existing.header.policy_digest !== policyDigest) {
    throw new ProvaelError(
      "run/plan-mismatch",
      `cannot resume ${options.out}: the policy's weights changed (${existing.header.policy_digest ?? "none"} then, ${policyDigest ?? "none"} now)`,
      {
        hint: "resume with the weights the run started with, or choose another --out",
      },
    );
  }
  const servedThen = existing ? servedModelLabel(existing.header.served_model) : null;
  const servedNow = servedModelLabel(probe.servedModel ?? undefined);
  if (existing && servedThen !== servedNow) {
    throw new ProvaelError(
      "run/plan-mismatch",
      `cannot resume ${options.out}: the server reports another model (${servedThen} then, ${servedNow} now)`,
      { hint: "resume against the server the run started with, or choose another --out" },
    );
  }
  checkReusedPolicy(reused, policyDigest, servedNow, (h) => servedModelLabel(h.served_model));
  checkWithPolicy(options, p, probe);
  const applicable: Record<string, boolean> = {};
  const notApplicable: Record<string, string> = {};
  for (const a of armAttacks) {
    const reason = notApplicableReason(a, probe.capabilities, suite.capabilities);
    applicable[a.id] = reason === null;
    if (reason !== null)
      notApplicable[a.id] =
        `${reason}; ${reason.startsWith("needs a policy") ? plan.policy : plan.suite} does not`;
  }
  const setup: ExecutorSetup = {
    plan,
    policyOptions: options.policyOptions,
    calibrations,
    applicable,
    ...(pluginSources.length > 0 ? { plugins: pluginSources } : {}),
    notApplicable,
  };

  const header = journalHeader(plan, {
    shard: shardLabel(shard),
    policy_digest: policyDigest,
    ...(probe.servedModel ? { served_model: probe.servedModel } : {}),
  });
  const journal = existing
    ? JournalWriter.reopen(journalPath, existing.validBytes, plan)
    : JournalWriter.create(journalPath, header);
  const reuse = copyReused(reused, cells, done, journal, journalPath);
  const pending = p.pending.filter((c) => !done.has(c.id));
  // Served (concurrent) policies keep episodes in flight in this thread; CPU-bound ones may use
  // worker threads. One worker means no pool at all.
  const workers =
    policy.concurrent || policy.ioBound
      ? 1
      : Math.min(options.workers ?? 1, Math.max(1, pending.length));

  let executor: Executor | null = null;
  let pool: Record<string, unknown> | null = null;
  let played = 0;
  let errors = 0;
  let aborted: ProvaelError | null = null;
  let next = 0;
  // Wall-clock time in the defenses' hooks, per arm, over the episodes this invocation played.
  const latency: Record<string, DefenseLatency> = {};
  const limit = options.maxEpisodes ?? Number.POSITIVE_INFINITY;
  options.onProgress?.(done.size, cells.length, 0);
  const lane = async (laneIndex: number, ex: Executor) => {
    for (;;) {
      // Back to the event loop before each episode: an in-process episode (MuJoCo and tiny-vla)
      // never waits on I/O, so without this a run of them never lets Ctrl-C or SIGTERM's
      // handler run (or a timer fire) until the whole run is over.
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (next >= limit || aborted || options.signal?.aborted) return;
      const cell: Cell | undefined = pending[next++];
      if (!cell) return;
      const result = await ex.play(cell, laneIndex);
      if (result.record.error !== null)
        result.record.error = {
          ...result.record.error,
          message: redactText(result.record.error.message, secrets),
        };
      const at = journal.append({
        type: "episode",
        record: result.record,
        trajectory: result.trajectory,
      });
      done.set(cell.id, { record: result.record, path: journalPath, ...at });
      if (result.timing) addTiming(latency, result.record.arm, result.timing);
      played += 1;
      if (result.record.error !== null) {
        errors += 1;
        if (options.maxErrors !== undefined && errors > options.maxErrors && !aborted) {
          aborted = new ProvaelError(
            "run/too-many-errors",
            `aborted after ${errors} episode errors (--max-errors ${options.maxErrors}); last: ${result.record.error.code}: ${result.record.error.message}`,
            {
              details: { errors, last: result.record.error },
              hint: "fix the cause (is the policy server up?), then finish the run with --resume; errored cells are played again",
            },
          );
        }
      }
      options.onProgress?.(done.size, cells.length, errors);
    }
  };
  try {
    if (pending.length > 0) {
      executor =
        options.policyUrls?.length && (policy.concurrent || policy.ioBound)
          ? await poolExecutor(setup, {
              urls: options.policyUrls,
              concurrency: options.concurrency,
              retries: options.infraRetries ?? DEFAULT_INFRA_RETRIES,
              secrets,
            })
          : workers > 1
            ? await workerExecutor(setup, workers)
            : await inProcessExecutor(
                setup,
                Math.max(1, Math.min(options.concurrency, pending.length)),
              );
      const ex = executor;
      await Promise.all(Array.from({ length: ex.lanes }, (_, i) => lane(i, ex)));
    }
  } finally {
    journal.close();
    pool = executor?.manifest?.() ?? null;
    await executor?.close();
  }
  if (aborted) throw aborted;
  return { played, workers, policyDigest, servedModel: probe.servedModel, latency, reuse, pool };
}

const copiedOf = (reuse: readonly ReuseRecord[]) => reuse.reduce((n, r) => n + r.episodes, 0);

/** Writes every output of a finished run (report, markdown, page, frames, clip, manifest). */
async function finalise(options: RunOptions, p: Prepared, s: Played): Promise<RunResult> {
  const { plan, suite, calibrations, done, shard, finish, clock, startedAt, secrets } = p;
  const { policyDigest, servedModel, workers, latency, played } = s;
  // A calibration's overlap is counted over the plan's scenes, so every shard reports the same.
  const specs = suite.tasks();
  const provenance = Object.fromEntries(
    plan.tasks.map((t) => {
      const spec = specs.find((x) => x.id === t);
      const scenes = spec
        ? Array.from({ length: plan.seeds }, (_, s) => sceneFor(plan, spec, plan.seed + s))
        : [];
      return [t, provenanceFor(suite, t, calibrations, scenes)];
    }),
  );
  const { report, digest, verdict } = await writeRunOutputs({
    out: options.out,
    plan,
    entries: [...done.values()],
    policyDigest,
    servedModel,
    calibration: provenance,
    shard: shardLabel(shard),
    policyOptions: options.policyOptions,
    calibrations,
    finish,
    manifest: {
      startedAt,
      clock,
      commandLine: options.commandLine,
      secrets,
      resumed: p.existing !== null,
      extra: {
        workers: Math.max(workers, 1),
        concurrency: options.concurrency,
        ...(plan.defenses ? { defense_latency: latencyReport(latency) } : {}),
        ...(s.reuse.length > 0 ? { reused: s.reuse } : {}),
        ...(s.pool ? { policy_pool: s.pool } : {}),
      },
    },
  });
  return {
    out: options.out,
    report,
    reportDigest: digest,
    played,
    copied: copiedOf(s.reuse),
    total: p.cells.length,
    alreadyComplete: false,
    verdict,
  };
}

/**
 * Every journalled episode must belong to a cell of this plan (and shard), and say what that
 * cell is: a line for another plan's or another shard's cell would be counted in the report.
 */
function checkJournalCells(
  out: string,
  entries: JournalEntry[],
  cells: Cell[],
  shard: string | null,
): void {
  const byId = new Map(cells.map((c) => [c.id, c]));
  const foreign: string[] = [];
  for (const e of entries) {
    const c = byId.get(e.record.cell);
    if (!c || !isRecordOf(c, e.record)) foreign.push(e.record.cell);
  }
  if (foreign.length > 0) {
    const ids = [...new Set(foreign)];
    throw new ProvaelError(
      "run/journal-corrupt",
      `cannot resume ${out}: the journal holds ${foreign.length} episode(s) for cells outside ${shard ? `shard ${shard} of ` : ""}the plan: ${ids.slice(0, 10).join(", ")}${ids.length > 10 ? ", …" : ""}`,
      {
        details: { cells: ids },
        hint: "the journal was edited or joined with another run's; start a new run directory",
      },
    );
  }
}

/** Calibrations must cover exactly the tasks the plan says, for this policy and suite. */
function checkCalibrations(
  plan: PlanSpec,
  calibrations: Record<string, LoadedCalibration>,
  require: boolean,
): void {
  for (const [task, c] of Object.entries(calibrations)) {
    if (c.calibration.policy !== plan.policy || c.calibration.suite !== plan.suite) {
      throw new ProvaelError(
        "config/calibration-mismatch",
        `calibration ${c.file} is for policy '${c.calibration.policy}' on '${c.calibration.suite}', not '${plan.policy}' on '${plan.suite}'`,
        {
          hint: "pass --calib a directory calibrated for this policy and suite",
        },
      );
    }
    if (plan.calibration[task] !== c.digest)
      throw new ProvaelError(
        "internal/invariant",
        `plan and calibration disagree for task '${task}'`,
      );
  }
  if (require) {
    const missing = plan.tasks.filter((t) => !calibrations[t]);
    if (missing.length > 0) {
      throw new ProvaelError(
        "config/uncalibrated",
        `--require-calibrated: no calibration for task(s) ${missing.join(", ")}`,
        {
          details: { missing },
          hint: "run `provael calibrate` for these tasks and pass --calib DIR, or drop --require-calibrated",
        },
      );
    }
  }
}

/** The plan's defenses: known ids in loop order, valid params, only for defenses it names. */
function checkDefensePlan(plan: PlanSpec): void {
  const d = plan.defenses;
  if (!d) return;
  const ids = resolveDefenses(d.ids);
  if (ids.join(",") !== d.ids.join(",")) {
    throw new ProvaelError(
      "config/invalid",
      `the plan's defenses must be listed in loop order (${ids.join(", ")}), got ${d.ids.join(", ")}`,
      { hint: "pass them through resolveDefenses" },
    );
  }
  for (const id of Object.keys(d.params)) {
    if (!ids.includes(id))
      throw new ProvaelError(
        "config/invalid",
        `defense params for '${id}', which the plan does not run`,
      );
  }
  for (const id of ids) resolveDefenseParams(id, d.params);
}

/** Wall-clock time spent in one arm's defenses. */
interface DefenseLatency {
  episodes: number;
  steps: number;
  ms: number;
}

function addTiming(into: Record<string, DefenseLatency>, arm: string, t: DefenseTiming): void {
  const e = into[arm] ?? { episodes: 0, steps: 0, ms: 0 };
  e.episodes += 1;
  e.steps += t.steps;
  e.ms += t.ms;
  into[arm] = e;
}

/**
 * Added latency per step by arm, for the execution manifest (wall clock: never in report.json).
 * Over the episodes this invocation played; a resumed run reports only what it played itself.
 */
function latencyReport(latency: Record<string, DefenseLatency>) {
  const arms = Object.keys(latency).sort();
  const total = arms.reduce(
    (a, k) => {
      const l = latency[k] as DefenseLatency;
      return { episodes: a.episodes + l.episodes, steps: a.steps + l.steps, ms: a.ms + l.ms };
    },
    { episodes: 0, steps: 0, ms: 0 },
  );
  const per = (l: DefenseLatency) => ({
    ...l,
    ms_per_step: l.steps > 0 ? l.ms / l.steps : null,
  });
  return {
    note: "wall-clock time inside the defenses' hooks per defended step, this invocation only",
    all: per(total),
    arms: Object.fromEntries(arms.map((k) => [k, per(latency[k] as DefenseLatency)])),
  };
}

/** A served model as one comparable string ("none" for an in-process policy). */
function servedModelLabel(m: ServedModel | undefined): string {
  return m ? `${m.protocol}:${m.name ?? "(unnamed)"}@${m.digest ?? "(no digest)"}` : "none";
}
