/**
 * A run: plan → cells → episodes (journalled as they finish) → report, trajectories, markdown
 * and manifest. The report depends only on the plan and the episodes, never on the number of
 * concurrent episodes, their completion order, or whether the run was resumed.
 */

import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { attacks } from "../attacks/index.js";
import { resolveParams } from "../attacks/params.js";
import { loadPlugins } from "../config/plugins.js";
import { systemClock } from "../core/clock.js";
import { sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import { redactPolicyOptions, secretValues } from "../core/redact.js";
import { provenanceFor, sceneFor } from "../kernel/index.js";
import { policies } from "../policies/index.js";
import { checkFinishOptions } from "../report/finalize.js";
import { decide } from "../report/verdict.js";
import { isCommitted } from "../rundir/commit.js";
import { checkOutputDir, RUN_FILES } from "../rundir/files.js";
import { type FinishedCell, latestPerCell } from "../rundir/journal.js";
import { LOCK_FILE } from "../rundir/lock.js";
import { readReportFile } from "../rundir/report.js";
import { suites } from "../suites/index.js";
import { probePolicy } from "./executor.js";
import { latencyReport } from "./latency.js";
import { openExisting, prepareOut } from "./out-dir.js";
import { writeRunOutputs } from "./outputs.js";
import { type Cell, type PlanSpec, planCells, validatePlan } from "./plan.js";
import { checkWithPolicy } from "./preflight.js";
import { checkReusedPolicy, openReused, type ReuseRecord, reusableCells } from "./reuse.js";
import {
  checkCalibrations,
  checkDefensePlan,
  checkJournalCells,
  withPlugins,
} from "./run-checks.js";
import type { CheckedPlan, Played, Prepared, RunOptions, RunResult } from "./run-types.js";
import { schedule, servedModelLabel } from "./schedule.js";
import { shardLabel } from "./shard.js";

export { checkWithPolicy, notApplicableReason } from "./preflight.js";
export type { CheckedPlan, RunOptions, RunResult } from "./run-types.js";
export { parseShard, type Shard, shardLabel } from "./shard.js";

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
    ...(options.madeBy ? { madeBy: options.madeBy } : {}),
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
