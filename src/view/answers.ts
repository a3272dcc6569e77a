/**
 * The viewer's answers assembled from what was read of a run, however it was read: by the
 * server from a run directory (./api.ts), or by the page from files dropped on it
 * (./client/files). Browser-safe: no file system, no registry (what needs one is passed in).
 */
import type { PlanSpec } from "../core/plan.js";
import type { ReportArms } from "../report/arms.js";
import { buildReport, type Report } from "../report/build.js";
import { compareReports } from "../report/regression.js";
import { resolveCell } from "../rundir/cell-id.js";
import type { FinishedRun, RunRead } from "../rundir/read.js";
import type {
  JournalHeaderFile,
  JournalRecord,
  ReportFile,
  TrajectoryStepFile,
} from "../rundir/schema/index.js";
import type { PageFacts } from "./facts.js";
import type {
  ComparePayload,
  EpisodePayload,
  EpisodeRecordPayload,
  EpisodeRow,
  Rate,
  RunPayload,
  RunSummary,
  ZonePayload,
} from "./payloads.js";

/** A run as listed: its id and label. */
export interface RunEntry {
  id: string;
  label: string;
}

/** A run's report: its own, or one built from the episodes journalled so far. */
export type ReportOf = { report: ReportFile; partial: boolean } | null;

/** What a run read gives the run's state in the summary (the fields the page shows). */
export type ReadRun = Pick<RunRead, "state" | "header"> &
  Partial<Pick<FinishedRun, "manifest" | "digest">> & {
    planned?: number;
    problem?: { message: string };
  };

/**
 * `reportArms` from the facts: the given params over each attack's defaults (attack params are
 * flat), a defense's likewise. Null when an arm or a defense is not a built-in one.
 */
export function reportArmsFrom(
  facts: Pick<PageFacts, "arms" | "defenses">,
  plan: PlanSpec,
): ReportArms | null {
  const arms: ReportArms["arms"] = {};
  for (const id of plan.arms) {
    const f = facts.arms[id];
    if (!f) return null;
    const { defaults, ...rest } = f;
    arms[id] = { ...rest, params: { ...defaults, ...plan.attack_params[id] } };
  }
  const played: ReportArms["defenses"] = {};
  for (const id of plan.defenses?.ids ?? []) {
    const d = facts.defenses[id];
    if (!d) return null;
    played[id] = { ...d, ...plan.defenses?.params[id] };
  }
  return { arms, defenses: played };
}

const NO_DIGEST = `sha256:${"0".repeat(64)}`;

/**
 * The report of a run in progress, built from the episodes journalled so far as the CLI builds
 * one (its trajectories not yet digested): what `provael view` and the page show as its rates
 * so far, marked partial.
 */
export function partialReport(
  header: Pick<JournalHeaderFile, "plan" | "tool_version" | "policy_digest" | "shard" | "bridge">,
  episodes: readonly JournalRecord[],
  /** What the report says of each arm (`reportArms`, or the page's facts of the built-ins). */
  arms: ReportArms,
): ReportFile {
  const plan = header.plan as PlanSpec;
  return buildReport({
    plan,
    arms,
    toolVersion: header.tool_version,
    policyDigest: header.policy_digest,
    episodes: episodes as Report["episodes"],
    trajectoriesDigest: NO_DIGEST,
    calibration: {},
    shard: header.shard,
    bridge: header.bridge ?? null,
  });
}

export function summarize(entry: RunEntry, read: ReadRun, got: ReportOf): RunSummary {
  const base: RunSummary = {
    id: entry.id,
    label: entry.label,
    state: read.state,
    policy: read.header?.plan.policy ?? null,
    suite: read.header?.plan.suite ?? null,
    protocol: null,
    tool_version: read.header?.tool_version ?? null,
    arms: read.header?.plan.arms ?? [],
    tasks: read.header?.plan.tasks ?? [],
    episodes: 0,
    planned: null,
    partial: false,
    headline: null,
    finished_at: null,
    digest: null,
    plan_digest: read.header?.plan_digest ?? null,
    problem: null,
  };
  if (read.state === "broken") return { ...base, problem: read.problem?.message ?? "broken" };
  if (!got) return base;
  const { report, partial } = got;
  const s = report.summary;
  const finished = read.state === "finished";
  return {
    ...base,
    policy: report.run.policy,
    suite: report.run.suite,
    protocol: report.protocol,
    tool_version: report.tool_version,
    arms: report.run.arms,
    tasks: report.run.tasks,
    episodes: report.episodes.length,
    planned: read.state === "in-progress" ? (read.planned ?? null) : report.episodes.length,
    partial,
    headline: {
      treatment_unsafe: s.treatment_unsafe,
      baseline_unsafe: s.baseline_unsafe,
      control_unsafe: s.control_unsafe,
      clean_task_success: s.clean_task_success,
    },
    finished_at: finished ? (read.manifest?.finished_at ?? null) : null,
    digest: finished ? (read.digest ?? null) : null,
    plan_digest: finished ? (read.manifest?.plan_digest ?? base.plan_digest) : base.plan_digest,
  };
}

export function episodeRow(e: EpisodeRecordPayload): EpisodeRow {
  return {
    cell: e.cell,
    task: e.task,
    arm: e.arm,
    seed: e.seed,
    repeat: e.repeat,
    scene: e.scene,
    unsafe: e.unsafe,
    task_success: e.task_success,
    error: e.error?.code ?? null,
    delivered: "delivered" in e ? (e.delivered ?? null) : null,
    judged_steps: e.judged_steps,
    first_unsafe_step: e.first_unsafe_step,
    instruction: e.instruction.received ?? e.instruction.original,
    not_applicable: e.termination === "not_applicable",
  };
}

/** One run's page: the report without its episodes, a row per episode, frames, caveats. */
export function runAnswer(
  summary: RunSummary,
  got: ReportOf,
  savedFrames: string[],
  caveats: () => string[],
): RunPayload {
  if (!got) return { summary, report: null, episodes: [], saved_frames: [], caveats: [] };
  const { episodes, ...head } = got.report;
  return {
    summary,
    report: head,
    episodes: episodes.map(episodeRow),
    saved_frames: savedFrames,
    caveats: caveats(),
  };
}

/** The twin plays the same task, seed, repeat and defenses. */
const pairKey = (e: {
  task: string;
  seed: number;
  repeat: number;
  defenses?: string[] | undefined;
}) => `${e.task}\u0000${e.seed}\u0000${e.repeat}\u0000${(e.defenses ?? []).join(",")}`;

/** The episode of a cell and its benign twin (same task, seed and repeat in the baseline arm). */
export function findPair(
  report: ReportFile,
  /** The cell id, or any unique prefix of it (src/rundir/cell-id.ts). */
  cell: string,
): { episode: EpisodeRecordPayload; twin: EpisodeRecordPayload | null } {
  const full = resolveCell(report.episodes, cell);
  const episode = report.episodes.find((e) => e.cell === full) as EpisodeRecordPayload;
  const base = report.tests.baseline_arm;
  const twin =
    base === null || episode.arm === base
      ? null
      : (report.episodes.find((e) => e.arm === base && pairKey(e) === pairKey(episode)) ?? null);
  return { episode, twin };
}

/** One episode beside its twin, with their steps and what the page can show of them. */
export function episodeAnswer(options: {
  run: RunSummary;
  report: ReportFile;
  pair: ReturnType<typeof findPair>;
  steps: Map<string, TrajectoryStepFile[]>;
  zones: ZonePayload[];
  replay: EpisodePayload["replay"];
  showcaseClip: EpisodePayload["showcase_clip"];
}): EpisodePayload {
  const { report, pair, steps } = options;
  const { episode, twin } = pair;
  const arm = report.arms[episode.arm];
  return {
    run: options.run,
    episode,
    twin,
    arm: {
      name: episode.arm,
      family: arm?.family ?? null,
      role: arm?.role ?? null,
      eai: arm?.eai ?? null,
      access: arm?.access ?? null,
      matches: arm?.matches ?? null,
      params: report.run.attack_params?.[episode.arm] ?? null,
    },
    steps: {
      episode: steps.get(episode.cell) ?? [],
      twin: twin ? (steps.get(twin.cell) ?? []) : [],
    },
    zones: options.zones,
    replay: options.replay,
    showcase_clip: options.showcaseClip,
  };
}

/** Two runs side by side: per-arm deltas, the gate (b against a) and the pairs that changed. */
export function compareAnswer(
  a: { summary: RunSummary; report: ReportFile },
  b: { summary: RunSummary; report: ReportFile },
): ComparePayload {
  const A = a.report;
  const B = b.report;
  let gate: ComparePayload["gate"] = null;
  let gateError: string | null = null;
  try {
    gate = compareReports(B, A, { allowIncomparable: true });
  } catch (e) {
    gateError = (e as Error).message;
  }
  const armNames = [...new Set([...A.run.arms, ...B.run.arms])];
  const arms = armNames.map((arm) => {
    const x: Rate | null = A.arms[arm]?.unsafe ?? null;
    const y: Rate | null = B.arms[arm]?.unsafe ?? null;
    return {
      arm,
      role: (B.arms[arm] ?? A.arms[arm])?.role ?? "treatment",
      a: x,
      b: y,
      delta: x?.rate != null && y?.rate != null ? y.rate - x.rate : null,
    };
  });
  const inA = new Map<string, JournalRecord>(A.episodes.map((e) => [e.cell, e]));
  const changed = B.episodes.flatMap((e) => {
    const o = inA.get(e.cell);
    if (!o || o.unsafe === e.unsafe) return [];
    return [
      {
        cell: e.cell,
        task: e.task,
        arm: e.arm,
        seed: e.seed,
        repeat: e.repeat,
        a: o.unsafe,
        b: e.unsafe,
      },
    ];
  });
  return { a: a.summary, b: b.summary, gate, gate_error: gateError, arms, changed };
}
