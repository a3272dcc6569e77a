/**
 * What the viewer's JSON API answers (and what a bundle stores): the browser app reads only
 * these shapes. Built from `readRun`, never from a file read another way.
 */
import type {
  FramesIndex,
  RateFile,
  ReportFile,
  ShowcaseClipFile,
  TrajectoryStepFile,
} from "../rundir/schema/index.js";

export type Rate = RateFile;

export interface RunSummary {
  id: string;
  label: string;
  state: "finished" | "in-progress" | "broken";
  policy: string | null;
  suite: string | null;
  protocol: string | null;
  tool_version: string | null;
  arms: string[];
  tasks: string[];
  /** Episodes counted so far (journalled, for a run in progress). */
  episodes: number;
  /** Cells the plan holds. */
  planned: number | null;
  /** True when the rates come from the episodes journalled so far. */
  partial: boolean;
  headline: {
    treatment_unsafe: Rate;
    baseline_unsafe: Rate;
    control_unsafe: Rate;
    clean_task_success: Rate;
  } | null;
  finished_at: string | null;
  digest: string | null;
  plan_digest: string | null;
  /** What is wrong with a broken run. */
  problem: string | null;
}

/** One row of the episodes table. */
export interface EpisodeRow {
  cell: string;
  task: string;
  arm: string;
  seed: number;
  repeat: number;
  scene: number;
  unsafe: boolean | null;
  task_success: boolean | null;
  error: string | null;
  delivered: boolean | null;
  judged_steps: number;
  first_unsafe_step: number | null;
  instruction: string;
  not_applicable: boolean;
}

export type ReportHead = Omit<ReportFile, "episodes">;

export interface RunPayload {
  summary: RunSummary;
  /** The report without its episodes (a partial report for a run in progress). */
  report: ReportHead | null;
  episodes: EpisodeRow[];
  /** Cells whose frames the run saved. */
  saved_frames: string[];
  /** The run's caveats (report/caveats.ts), as every other surface prints them. */
  caveats: string[];
}

export type EpisodeRecordPayload =
  | ReportFile["episodes"][number]
  | (Omit<ReportFile["episodes"][number], "delivered"> & { delivered?: boolean | null });

export interface ZonePayload {
  id: string;
  label: string;
  min: number[];
  max: number[];
}

export interface EpisodePayload {
  run: RunSummary;
  episode: EpisodeRecordPayload;
  /** The benign twin: same task, seed and repeat in the baseline arm (null for the baseline itself). */
  twin: EpisodeRecordPayload | null;
  arm: {
    name: string;
    family: string | null;
    role: string | null;
    eai: string | null;
    access: string | null;
    matches: string | null;
    params: Record<string, unknown> | null;
  };
  steps: { episode: TrajectoryStepFile[]; twin: TrajectoryStepFile[] };
  zones: ZonePayload[];
  /** Whether frames can be replayed for this run, and if not, why. */
  replay: { possible: boolean; reason: string | null };
  /**
   * The clip report.html embeds (`clips/showcase.webm` of the run), when this episode or its
   * twin is its pair: the server serves it at `clip/<run>/showcase.webm`, a bundle carries it
   * as `files/<run>/clips/showcase.webm`.
   */
  showcase_clip: ShowcaseClipFile | null;
}

export interface FramesPayload {
  cell: string;
  index: FramesIndex | null;
  /** Why there are no frames (or only the run's few saved ones). */
  reason: string | null;
}

export interface ComparePayload {
  a: RunSummary;
  b: RunSummary;
  /** The regression gate with `b` as the candidate and `a` as the baseline. */
  gate: import("../report/regression.js").RegressionResult | null;
  gate_error: string | null;
  arms: { arm: string; role: string; a: Rate | null; b: Rate | null; delta: number | null }[];
  /** Cells played in both runs whose unsafe outcome differs. */
  changed: {
    cell: string;
    task: string;
    arm: string;
    seed: number;
    repeat: number;
    a: boolean | null;
    b: boolean | null;
  }[];
}
