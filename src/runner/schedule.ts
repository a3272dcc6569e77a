/** Plays a prepared run's pending cells into its journal: the policy probed, an executor chosen, one lane per slot. */

import { ProvaelError } from "../core/errors.js";
import { redactText } from "../core/redact.js";
import type { ServedModel } from "../core/types.js";
import { JournalWriter, journalHeader } from "../rundir/journal.js";
import {
  type Executor,
  type ExecutorSetup,
  inProcessExecutor,
  probePolicy,
  workerExecutor,
} from "./executor.js";
import type { DefenseLatency } from "./latency.js";
import { addTiming } from "./latency.js";
import type { Cell } from "./plan.js";
import { DEFAULT_INFRA_RETRIES, poolExecutor } from "./pool.js";
import { checkWithPolicy, notApplicableReason } from "./preflight.js";
import { checkReusedPolicy, copyReused } from "./reuse.js";
import type { Played, Prepared, RunOptions } from "./run-types.js";
import { shardLabel } from "./shard.js";

/** Probes the policy, checks what needs it, and plays the pending cells into the journal. */
export async function schedule(options: RunOptions, p: Prepared): Promise<Played> {
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

/** A served model as one comparable string ("none" for an in-process policy). */
export function servedModelLabel(m: ServedModel | undefined): string {
  return m ? `${m.protocol}:${m.name ?? "(unnamed)"}@${m.digest ?? "(no digest)"}` : "none";
}
