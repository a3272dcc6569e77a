/**
 * What one played episode is on record: the journal line's record and trajectory steps, the
 * report's `episodes[]`. Shared by the runner and the bridge that write them and the report that
 * reads them.
 */
import type { BudgetUse } from "./types.js";

/** A stop as an episode records it: which defense, at which step, why. */
export interface StopRecord {
  defense: string;
  /** The step whose action was withheld (-1: before the first step). */
  step: number;
  reason: string;
}

export type TerminationReason =
  | "horizon"
  | "unsafe"
  | "success"
  | "done"
  | "error"
  | "not_applicable"
  /** A defense stopped the arm (a safe stop): neither unsafe nor success by itself. */
  | "stop";

/**
 * One predicate's endpoint. Its own judged steps decide it: `unsafe` is null when the predicate
 * judged no step (another predicate judging those steps does not make this one safe).
 */
export interface EndpointRecord {
  unsafe: boolean | null;
  first_step: number | null;
  steps: number;
  judged_steps: number;
  /** Cumulative cost: the predicate's excess force over its threshold summed over steps (N·step); only predicates that measure force report it. */
  cost?: number;
}

/** What the journal stores for one finished cell (the report's `episodes[]` plus delivery facts). */
export interface EpisodeRecord {
  cell: string;
  task: string;
  arm: string;
  seed: number;
  repeat: number;
  scene: number;
  scene_digest: string | null;
  policy_seed: number;
  instruction: { original: string; received: string | null };
  received_digest: string | null;
  /** What the arm changed during the episode (inputs, actions, scene). */
  perturbed: { inputs: boolean; actions: boolean; scene: boolean };
  steps: number;
  termination: TerminationReason;
  unsafe: boolean | null;
  first_unsafe_step: number | null;
  unsafe_steps: number;
  /** Steps judged for the combined endpoint: every predicate judged them, or one found them unsafe. */
  judged_steps: number;
  task_success: boolean | null;
  first_success_step: number | null;
  endpoints: Record<string, EndpointRecord>;
  /** Sum of the endpoints' cumulative costs (N·step); null when no predicate measures force. */
  cost?: number | null;
  budget: BudgetUse | null;
  error: { code: string; message: string } | null;
  /** Bridged episodes only: what the benchmark said about it and how its images travelled. */
  bridge?: BridgedEpisode;
  /** Only on N/A cells: the attack's unmet requirement, in words. */
  not_applicable_reason?: string;
  /** Defended cells only: the defenses in loop order. */
  defenses?: string[];
  /** Defended cells only: the stop that ended the episode, or null when none did. */
  stop?: StopRecord | null;
  /** Defended cells only: what each defense did (its own counters), by defense id. */
  interventions?: Record<string, Record<string, number>>;
}

export interface BridgedEpisode {
  /** The benchmark's task dict from EPISODE_START (scalars and lists of scalars). */
  task: Record<string, unknown>;
  /** The `__image__` format that carried the images (png, jpeg, raw), null when none came. */
  image_codec: string | null;
  /** Observations forwarded to the upstream policy. */
  steps_forwarded: number;
  /**
   * Of those, the ones that reached the model: a client that executes action chunks answers
   * the others from its chunk, so a perturbation of them never reached the model. Absent or
   * null where the upstream cannot tell (an in-process policy).
   */
  steps_used?: number | null | undefined;
  /** Actions per model answer over the episode (k for chunks of k); null where unknown. */
  chunk?: number | null | undefined;
}

export interface TrajectoryStep {
  cell: string;
  step: number;
  instruction_digest: string;
  action: number[];
  pose: number[] | null;
  unsafe: boolean | null;
}
