/** What a run is given, what it hands on from step to step (check, prepare, schedule), and what it answers. */

import type { PluginSource } from "../config/plugins.js";
import type { Clock } from "../core/clock.js";
import type { Attack, Policy, PolicyOptions, ServedModel, Suite } from "../core/types.js";
import type { LoadedCalibration } from "../kernel/index.js";
import type { Report } from "../report/build.js";
import type { FinishOptions } from "../report/finalize.js";
import type { Verdict } from "../report/verdict.js";
import type { FinishedCell, scanJournal } from "../rundir/journal.js";
import type { RunLock } from "../rundir/lock.js";
import type { DefenseLatency } from "./latency.js";
import type { Cell, PlanSpec } from "./plan.js";
import type { ReusedRun, ReuseRecord } from "./reuse.js";
import type { Shard } from "./shard.js";

export interface RunOptions {
  plan: PlanSpec;
  out: string;
  resume: boolean;
  concurrency: number;
  policyOptions: PolicyOptions;
  commandLine: string[];
  /** What made the run: `runAttack` of the library words the caveats' fixes for itself. */
  madeBy?: "attack" | "library";
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

/** What `prepare` hands on: the checked plan, the directory's state and the cells left. */
export interface Prepared extends CheckedPlan {
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
export interface Played {
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
