/**
 * Executors play cells. In-process: N slots in this thread (I/O-bound served policies keep N
 * episodes in flight). Worker threads: a pool where each worker loads the suite and the policy
 * once and plays one cell at a time (CPU-bound physics and in-process models). Either way the
 * results come back here, to the one journal.
 */
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { Piscina } from "piscina";
import { PACKAGE_ROOT } from "../core/package-root.js";
import type {
  PolicyCapabilities,
  PolicyInstance,
  PolicyOptions,
  ServedModel,
  SuiteInstance,
} from "../core/types.js";
import { policies } from "../policies/index.js";
import { suites } from "../suites/index.js";
import type { Cell, PlanSpec } from "./plan.js";
import { type CellResult, type ExecutorSetup, playCell } from "./play-cell.js";

export { type CellResult, type ExecutorSetup, playCell } from "./play-cell.js";

export interface Executor {
  /** How many cells may be in flight at once. */
  readonly lanes: number;
  play(cell: Cell, lane: number): Promise<CellResult>;
  /** What the execution manifest records of this executor (a pool: who played which cell). */
  manifest?(): Record<string, unknown>;
  close(): Promise<void>;
}

interface Slot {
  instance: SuiteInstance;
  policy: PolicyInstance;
}

/** N slots in this thread; a concurrent (served) policy shares one instance across slots. */
export async function inProcessExecutor(setup: ExecutorSetup, lanes: number): Promise<Executor> {
  const suite = suites.get(setup.plan.suite);
  const policy = policies.get(setup.plan.policy);
  const slots: Slot[] = [];
  let shared: PolicyInstance | null = null;
  try {
    for (let i = 0; i < lanes; i++) {
      let p: PolicyInstance;
      if (policy.concurrent) {
        shared ??= await policy.load(setup.policyOptions);
        p = shared;
      } else {
        p = await policy.load(setup.policyOptions);
      }
      // The loaded instance knows its cameras (a served policy's come from its layout).
      const instance = await suite.open({ cameras: p.capabilities.cameras });
      slots.push({ instance, policy: p });
    }
  } catch (e) {
    await closeSlots(slots);
    throw e;
  }
  return {
    lanes,
    play: (cell, lane) => {
      const slot = slots[lane % slots.length] as Slot;
      return playCell(setup, cell, slot.instance, slot.policy);
    },
    close: () => closeSlots(slots),
  };
}

async function closeSlots(slots: Slot[]): Promise<void> {
  const closed = new Set<PolicyInstance>();
  for (const s of slots) {
    await s.instance.close();
    if (!closed.has(s.policy)) {
      closed.add(s.policy);
      await s.policy.close();
    }
  }
}

/** The built worker module; tests running from src/ use the build too (see test/support). */
export const WORKER_FILE = join(PACKAGE_ROOT, "dist", "runner", "worker.js");

/** A pool of worker threads, each loading the suite and the policy once. */
export async function workerExecutor(setup: ExecutorSetup, workers: number): Promise<Executor> {
  const pool = new Piscina({
    filename: WORKER_FILE,
    minThreads: workers,
    maxThreads: workers,
    idleTimeout: 60_000,
    concurrentTasksPerWorker: 1,
  });
  return {
    lanes: workers,
    play: (cell) => pool.run({ setup, cell }) as Promise<CellResult>,
    close: () => pool.destroy(),
  };
}

/**
 * Below this many seconds of estimated episodes a pool costs more than it saves: each worker
 * thread loads the whole library, the policy and the physics before its first episode (about
 * 1.5 s of CPU per thread, measured with `node --cpu-prof` on a stub run), which is more than a
 * stub plan or one tabletop episode takes in this thread.
 */
export const POOL_WORTH_SECONDS = 5;

/**
 * Default worker count: every core this process may use, unless the plan's estimated time on one
 * worker (`estimatePlan`, null when its cost is not documented) is under `POOL_WORTH_SECONDS`.
 * An explicit `--workers` is never overridden.
 */
export function defaultWorkers(estimateSeconds: number | null = null): number {
  if (estimateSeconds !== null && estimateSeconds < POOL_WORTH_SECONDS) return 1;
  return availableParallelism();
}

/** Loads one policy instance to learn its digest and capabilities, then closes it. */
export async function probePolicy(
  plan: PlanSpec,
  options: PolicyOptions,
): Promise<{
  digest: string | null;
  capabilities: PolicyCapabilities;
  servedModel: ServedModel | null;
}> {
  const policy = policies.get(plan.policy);
  const inst = await policy.load(options);
  try {
    // Whether search attacks can query it is a fact of the loaded instance, not a declaration.
    return {
      digest: inst.digest ?? null,
      capabilities: { ...inst.capabilities, queryable: typeof inst.query === "function" },
      servedModel: inst.servedModel ?? null,
    };
  } finally {
    await inst.close();
  }
}
