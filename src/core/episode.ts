/**
 * What one played episode is on record: the journal line's record and trajectory steps, the
 * report's `episodes[]`. Declared once as zod schemas (the types are inferred from them); shared
 * by the runner and the bridge that write them and the report that reads them.
 */
import { z } from "zod";

/** Why an episode ended. `stop`: a defense stopped the arm (a safe stop, neither unsafe nor success). */
export const TERMINATION_REASONS = [
  "horizon",
  "unsafe",
  "success",
  "done",
  "error",
  "not_applicable",
  "stop",
] as const;
export const terminationReasonSchema = z.enum(TERMINATION_REASONS);
export type TerminationReason = z.infer<typeof terminationReasonSchema>;

/** What an attack spends, per episode. */
export const BUDGET_KINDS = ["queries", "pgd-steps", "bit-flips", "none"] as const;

/** Budget use an attack reports per episode. */
export const budgetUseSchema = z
  .object({
    kind: z.enum(BUDGET_KINDS),
    limit: z.number().nullable(),
    used: z.number(),
    /** Extra facts (norm bound, refreshes, flipped-positions digest). */
    detail: z.record(z.string(), z.unknown()).exactOptional(),
  })
  .strict();
export type BudgetUse = z.infer<typeof budgetUseSchema>;

/**
 * One predicate's endpoint. Its own judged steps decide it: `unsafe` is null when the predicate
 * judged no step (another predicate judging those steps does not make this one safe).
 */
export const endpointRecordSchema = z
  .object({
    unsafe: z.boolean().nullable(),
    first_step: z.number().int().nullable(),
    steps: z.number().int(),
    judged_steps: z.number().int(),
    /** Cumulative cost: the predicate's excess force over its threshold summed over steps (N·step); only predicates that measure force report it. */
    cost: z.number().min(0).exactOptional(),
  })
  .strict();
export type EndpointRecord = z.infer<typeof endpointRecordSchema>;

/** A stop as an episode records it: which defense, at which step (-1: before the first), why. */
export const stopRecordSchema = z
  .object({ defense: z.string(), step: z.number().int(), reason: z.string() })
  .strict();
export type StopRecord = z.infer<typeof stopRecordSchema>;

/** Bridged episodes only: what the benchmark said about it and how its images travelled. */
export const bridgedEpisodeSchema = z
  .object({
    /** The benchmark's task dict from EPISODE_START (scalars and lists of scalars). */
    task: z.record(z.string(), z.unknown()),
    /** The `__image__` format that carried the images (png, jpeg, raw), null when none came. */
    image_codec: z.string().nullable(),
    /** Observations forwarded to the upstream policy. */
    steps_forwarded: z.number().int(),
    /**
     * Of those, the ones that reached the model: a client that executes action chunks answers
     * the others from its chunk, so a perturbation of them never reached the model. Absent or
     * null where the upstream cannot tell (an in-process policy).
     */
    steps_used: z.number().int().nullable().optional(),
    /** Actions per model answer over the episode (k for chunks of k); null where unknown. */
    chunk: z.number().nullable().optional(),
  })
  .strict();
export type BridgedEpisode = z.infer<typeof bridgedEpisodeSchema>;

/**
 * One episode as the report's `episodes[]` holds it. The journal's record is the same without
 * `delivered`, which the report derives from the benign twin.
 */
export const episodeSchema = z
  .object({
    // A cell id names a frames folder: nothing else (`../x`) may pass for one.
    cell: z.string().regex(/^c[0-9a-f]{20}$/),
    task: z.string(),
    arm: z.string(),
    seed: z.number().int(),
    repeat: z.number().int(),
    scene: z.number().int(),
    scene_digest: z.string().nullable(),
    policy_seed: z.number().int(),
    instruction: z.object({ original: z.string(), received: z.string().nullable() }).strict(),
    received_digest: z.string().nullable(),
    delivered: z.boolean().nullable(),
    /** What the arm changed during the episode (inputs, actions, scene). */
    perturbed: z.object({ inputs: z.boolean(), actions: z.boolean(), scene: z.boolean() }).strict(),
    steps: z.number().int(),
    termination: terminationReasonSchema,
    unsafe: z.boolean().nullable(),
    first_unsafe_step: z.number().int().nullable(),
    unsafe_steps: z.number().int(),
    /** Steps judged for the combined endpoint: every predicate judged them, or one found them unsafe. */
    judged_steps: z.number().int(),
    task_success: z.boolean().nullable(),
    first_success_step: z.number().int().nullable(),
    endpoints: z.record(z.string(), endpointRecordSchema),
    /** Sum of the endpoints' cumulative costs (N·step); null when no predicate measures force. */
    cost: z.number().min(0).nullable().exactOptional(),
    budget: budgetUseSchema.nullable(),
    error: z.object({ code: z.string(), message: z.string() }).strict().nullable(),
    bridge: bridgedEpisodeSchema
      .exactOptional()
      .describe("bridged episodes only: the benchmark's task dict and how images travelled"),
    not_applicable_reason: z
      .string()
      .exactOptional()
      .describe("only on N/A cells: the attack's unmet requirement"),
    defenses: z
      .array(z.string())
      .exactOptional()
      .describe("defended cells only: the defenses the episode played with, in loop order"),
    stop: stopRecordSchema
      .nullable()
      .exactOptional()
      .describe(
        "defended cells only: the safe stop that ended the episode (termination 'stop'), or null",
      ),
    interventions: z
      .record(z.string(), z.record(z.string(), z.number()))
      .exactOptional()
      .describe("defended cells only: each defense's own counters for the episode"),
  })
  .strict();

/** What the journal stores for one finished cell (the report's episode without `delivered`). */
export const episodeRecordSchema = episodeSchema.omit({ delivered: true });
export type EpisodeRecord = z.infer<typeof episodeRecordSchema>;

/** One line of `trajectories.jsonl` (and of a journal episode's `trajectory`): one step. */
export const trajectoryStepSchema = z
  .object({
    cell: z.string().regex(/^c[0-9a-f]{20}$/),
    step: z.number().int().min(0),
    /** SHA-256 of the instruction the policy received at this step. */
    instruction_digest: z.string(),
    action: z.array(z.number()),
    /** End-effector position after the step, null when the suite reports none. */
    pose: z.array(z.number()).nullable(),
    /** The combined endpoint at this step; null when the step was unjudged. */
    unsafe: z.boolean().nullable(),
  })
  .strict();
export type TrajectoryStep = z.infer<typeof trajectoryStepSchema>;
