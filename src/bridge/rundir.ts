/**
 * A bridged run's directory: the same journal, report, trajectories and manifest the runner
 * writes. The plan's cells are not known in advance (the benchmark chooses the episodes), so the
 * journal header holds the plan without tasks or seeds, and the report's plan is completed from
 * the episodes that finished: the tasks seen, the seed range, the repeats.
 */
import { closeSync, existsSync, fdatasyncSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { Clock } from "../core/clock.js";
import type { EpisodeRecord, TrajectoryStep } from "../core/episode.js";
import { ProvaelError } from "../core/errors.js";
import { TOOL_VERSION } from "../core/package-root.js";
import { type PlanSpec, planDifferences } from "../core/plan.js";
import type { LoadedCalibration } from "../kernel/index.js";
import type { Report } from "../report/build.js";
import { finalize } from "../report/finalize.js";
import { buildManifest } from "../report/manifest.js";
import { RUN_FILES, removeTempFiles, writeFileAtomic } from "../rundir/files.js";
import {
  type FinishedCell,
  type JournalEntry,
  type JournalHeader,
  JournalWriter,
  journalHeader,
  scanJournal,
} from "../rundir/journal.js";
import { claimRunDir, type RunLock } from "../rundir/lock.js";
import { type BenchmarkProfile, loadProfile, taskProvenance } from "./profile.js";
import type { Refusal } from "./refusal.js";

export interface BridgeRunResult {
  out: string;
  report: Report;
  reportDigest: string;
  episodes: number;
}

interface JournalSetup {
  /**
   * The plan's fields the command's flags set (the flag table, src/config/plan-flags.ts); the
   * fields below, and what the episodes complete, take precedence.
   */
  plan?: Partial<PlanSpec>;
  policy: string;
  planPolicyOptions?: Record<string, unknown>;
  arms: string[];
  attackParams?: Record<string, Record<string, unknown>>;
  defenses?: { ids: string[]; params: Record<string, Record<string, unknown>>; compare?: boolean };
  profile: BenchmarkProfile;
  calibrations?: Record<string, LoadedCalibration>;
  out: string;
}

/** The plan a bridge starts with: arms and options fixed, cells left to the benchmark. */
function openPlan(o: JournalSetup): PlanSpec {
  return {
    ...o.plan,
    policy: o.policy,
    suite: o.profile.suite ?? o.profile.benchmark,
    tasks: [],
    arms: o.arms,
    seed: 0,
    seeds: 0,
    repeats: 0,
    horizon: null,
    termination: "fixed-horizon",
    scene_pin: 0,
    policy_options: o.planPolicyOptions ?? {},
    attack_params: o.attackParams ?? {},
    calibration: Object.fromEntries(
      Object.entries(o.calibrations ?? {}).map(([t, c]) => [t, c.digest]),
    ),
    ...(o.defenses && o.defenses.ids.length > 0
      ? {
          defenses: {
            ids: o.defenses.ids,
            compare: o.defenses.compare ?? false,
            params: o.defenses.params,
          },
        }
      : {}),
  };
}

/** The open plan completed from the finished episodes (tasks sorted, so the order is stable). */
export function bridgedPlan(open: PlanSpec, records: readonly EpisodeRecord[]): PlanSpec {
  const tasks = [...new Set(records.map((r) => r.task))].sort();
  const seeds = records.map((r) => r.seed);
  const lo = seeds.length > 0 ? Math.min(...seeds) : 0;
  const hi = seeds.length > 0 ? Math.max(...seeds) : -1;
  return {
    ...open,
    tasks,
    seed: lo,
    seeds: hi - lo + 1,
    repeats: records.reduce((m, r) => Math.max(m, r.repeat + 1), 0),
  };
}

/** Latest line per cell, an errored one superseded by a later replay (the runner's rule). */
function latestByCell<T extends { record: EpisodeRecord }>(entries: readonly T[]): T[] {
  const done = new Map<string, T>();
  for (const e of entries) {
    const prior = done.get(e.record.cell);
    if (!prior || prior.record.error !== null) done.set(e.record.cell, e);
  }
  return [...done.values()];
}

/** Writes report.json, report.md and trajectories.jsonl for a bridged run's finished cells. */
function writeReport(
  out: string,
  header: JournalHeader,
  entries: FinishedCell[],
  profile: BenchmarkProfile,
  calibrations: Record<string, LoadedCalibration>,
): { report: Report; digest: string } {
  const cells = latestByCell(entries);
  const plan = bridgedPlan(
    header.plan,
    cells.map((c) => c.record),
  );
  const provenance = Object.fromEntries(
    plan.tasks.map((t) => [
      t,
      taskProvenance(
        profile,
        t,
        calibrations,
        cells.filter((c) => c.record.task === t).map((c) => c.record.scene),
      ),
    ]),
  );
  return finalize(out, plan, cells, header.policy_digest, provenance, null, header.bridge ?? null);
}

/**
 * Refuses to continue a journal written by another setup, naming what differs: `attack
 * --resume`'s rule (the plan field by field, then the weights), plus the benchmark profile.
 */
function checkResumable(out: string, was: JournalHeader, now: JournalHeader): void {
  if (!was.bridge) {
    throw new ProvaelError(
      "run/plan-mismatch",
      `cannot resume ${out}: it holds a runner's run, not a bridged one`,
      {
        hint: "finish it with `provael attack --resume`, or choose another --out for the bridge",
      },
    );
  }
  const diffs = planDifferences(was.plan, now.plan);
  for (const k of ["profile", "benchmark"] as const) {
    if (was.bridge[k] !== now.bridge?.[k])
      diffs.push(
        `bridge.${k}: ${JSON.stringify(was.bridge[k])} vs ${JSON.stringify(now.bridge?.[k])}`,
      );
  }
  if (diffs.length > 0 || was.plan_digest !== now.plan_digest) {
    throw new ProvaelError(
      "run/plan-mismatch",
      `cannot resume ${out}: the journal was written for another plan (${diffs.join("; ")})`,
      {
        details: { differences: diffs },
        hint: "restart the bridge with the original flags, or choose another --out",
      },
    );
  }
  if (was.policy_digest !== now.policy_digest) {
    throw new ProvaelError(
      "run/plan-mismatch",
      `cannot resume ${out}: the policy's weights changed (${was.policy_digest ?? "none"} then, ${now.policy_digest ?? "none"} now)`,
      { hint: "resume with the weights the run started with, or choose another --out" },
    );
  }
}

/**
 * Records a refusal in the run directory's `refusals.jsonl` (one JSON line, synced: a bridge is
 * stopped by a signal at any moment). A resumed run appends to its earlier sessions' refusals.
 */
export function appendRefusal(out: string, r: Refusal): void {
  const fd = openSync(join(out, RUN_FILES.refusals), "a");
  try {
    writeSync(fd, `${JSON.stringify(r)}\n`);
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** A run directory held for a bridge whose journal opens later (`--profile auto`). */
export interface ClaimedDir {
  lock: RunLock;
  /** What the directory held when claimed (null: it did not exist). */
  entries: string[] | null;
}

/** Takes the run directory (one writer at a time) before the journal is opened. */
export function claimBridgeDir(out: string): ClaimedDir {
  return claimRunDir(out, "--out", "provael bridge");
}

/**
 * The profile a bridged run in `out` was written with, for `--profile auto --resume` (null:
 * the directory holds no bridged journal).
 */
export function journalledProfile(claimed: ClaimedDir, out: string): string | null {
  if (!claimed.entries?.includes(RUN_FILES.journal)) return null;
  return scanJournal(join(out, RUN_FILES.journal)).header.bridge?.profile ?? null;
}

/** The bridge's journal: every finished episode appended (and synced) as it ends. */
export class BridgeJournal {
  private readonly entries: FinishedCell[] = [];
  private readonly path: string;
  private closed = false;

  private constructor(
    private readonly o: JournalSetup,
    private readonly header: JournalHeader,
    private readonly writer: JournalWriter,
    private readonly lock: RunLock,
    private readonly clock: Clock,
    private readonly startedAt: number,
    private readonly resumed: boolean,
  ) {
    this.path = join(o.out, RUN_FILES.journal);
  }

  /**
   * Opens the run directory: a new or empty one, or with `resume` one that holds a bridged run
   * of the same plan, profile and weights, whose journal it continues (its finished episodes
   * kept, in the report and in the repeat counts). Anything else that holds files is refused.
   */
  static create(
    o: JournalSetup,
    policyDigest: string | null,
    clock: Clock,
    resume = false,
    claimed?: ClaimedDir,
  ): BridgeJournal {
    const plan = openPlan(o);
    const header = journalHeader(plan, {
      shard: null,
      policy_digest: policyDigest,
      bridge: {
        profile: o.profile.id,
        benchmark: o.profile.benchmark,
        // The fields each episode's task dict is split by in the report (LIBERO-Plus's).
        ...(o.profile.task.fields.length > 0 ? { task_fields: o.profile.task.fields } : {}),
      },
    });
    const path = join(o.out, RUN_FILES.journal);
    // One writer per directory, let go when the run is closed.
    const { lock, entries } = claimed ?? claimBridgeDir(o.out);
    try {
      return BridgeJournal.open(o, header, path, entries, lock, clock, resume);
    } catch (e) {
      lock.release();
      throw e;
    }
  }

  private static open(
    o: JournalSetup,
    header: JournalHeader,
    path: string,
    inside: string[] | null,
    lock: RunLock,
    clock: Clock,
    resume: boolean,
  ): BridgeJournal {
    if (inside) {
      if (resume && inside.includes(RUN_FILES.journal)) {
        const scan = scanJournal(path);
        checkResumable(o.out, scan.header, header);
        // The report on disk is the last session's; until this one closes the run is unfinished.
        rmSync(join(o.out, RUN_FILES.manifest), { force: true });
        removeTempFiles(o.out);
        const writer = JournalWriter.reopen(path, scan.validBytes, scan.header.plan);
        const j = new BridgeJournal(o, scan.header, writer, lock, clock, clock.now(), true);
        j.entries.push(...scan.entries);
        return j;
      }
      if (inside.length > 0) {
        const holdsRun = inside.includes(RUN_FILES.journal);
        throw new ProvaelError(
          "run/out-exists",
          `${o.out} is not empty${holdsRun ? " (it holds a run)" : ""}`,
          {
            details: { out: o.out, entries: inside.slice(0, 5) },
            hint: holdsRun
              ? "pass --resume to continue that bridged run with the same flags, or choose a new --out"
              : "choose a new or empty --out; finished results are never overwritten",
          },
        );
      }
    }
    const writer = JournalWriter.create(path, header);
    return new BridgeJournal(o, header, writer, lock, clock, clock.now(), false);
  }

  /** The episodes journalled before this session (a resumed run), in journal order. */
  get previous(): readonly EpisodeRecord[] {
    return this.resumed ? this.entries.map((e) => e.record) : [];
  }

  get count(): number {
    return this.entries.length;
  }

  /** Whether `append` still records episodes (false once the run is closed). */
  get accepting(): boolean {
    return !this.closed;
  }

  append(record: EpisodeRecord, trajectory: TrajectoryStep[]): void {
    if (this.closed) return;
    const at = this.writer.append({ type: "episode", record, trajectory });
    // Forced to disk now: a bridge is stopped by a signal at any moment.
    this.writer.sync();
    this.entries.push({ record, path: this.path, ...at });
  }

  private closeFiles(): void {
    this.closed = true;
    this.writer.close();
  }

  /** Closes the journal without a report (the bridge never started listening). */
  abandon(): void {
    if (this.closed) return;
    this.closeFiles();
    this.lock.release();
  }

  /** Closes the journal and writes the report and manifest. */
  finish(commandLine: string[]): BridgeRunResult {
    if (!this.closed) this.closeFiles();
    try {
      return this.writeOutputs(commandLine);
    } finally {
      this.lock.release();
    }
  }

  private writeOutputs(commandLine: string[]): BridgeRunResult {
    const { report, digest } = writeReport(
      this.o.out,
      this.header,
      this.entries,
      this.o.profile,
      this.o.calibrations ?? {},
    );
    const manifest = buildManifest({
      reportDigest: digest,
      trajectoriesDigest: report.trajectories_digest,
      planDigest: this.header.plan_digest,
      toolVersion: TOOL_VERSION,
      shard: null,
      startedAt: this.startedAt,
      clock: this.clock,
      commandLine,
      resumed: this.resumed,
      extra: { bridge: this.header.bridge },
    });
    writeFileAtomic(join(this.o.out, RUN_FILES.manifest), `${JSON.stringify(manifest, null, 2)}\n`);
    return { out: this.o.out, report, reportDigest: digest, episodes: this.entries.length };
  }
}

/** Whether a run directory holds a bridged run's journal. */
export function isBridgedRun(dir: string): boolean {
  const path = join(dir, RUN_FILES.journal);
  return existsSync(path) && scanJournal(path).header.bridge !== undefined;
}

/**
 * Builds the report of a bridged run from its journal alone (a bridge that was killed before it
 * could write one). Same statistics, same bytes as the bridge would have written.
 */
export function reportFromBridgeJournal(dir: string, profile?: BenchmarkProfile): Report {
  const scan = scanJournal(join(dir, RUN_FILES.journal));
  const bridge = scan.header.bridge;
  if (!bridge) {
    throw new ProvaelError("run/incomplete", `${dir} is not a bridged run`, {
      hint: "finish a runner's run with `provael attack --resume`",
    });
  }
  const p = profile ?? loadProfile(bridge.profile);
  const entries: JournalEntry[] = scan.entries;
  return writeReport(dir, scan.header, entries, p, {}).report;
}
