/**
 * `journal.jsonl`: the first line is the header (the plan the directory holds), every other line
 * one finished episode with its trajectory. The episode record is the report's episode without
 * `delivered` (the report derives that from the benign twin).
 */
import { z } from "zod";
import { digestJson } from "../../core/digest.js";
import { episodeSchema, servedModelSchema } from "./report.js";
import { trajectoryStepSchema } from "./trajectory.js";

/** `/2`: every line carries `sum`. `/1` journals had none and are refused by name. */
export const JOURNAL_FORMAT = "provael.journal/2";
export const UNCHECKED_JOURNAL_FORMAT = "provael.journal/1";

const digest = z.string().regex(/^sha256:[0-9a-f]{64}$/);

/**
 * The checksum a journal line carries as `sum`: the SHA-256 of the line's content in RFC 8785
 * canonical form, `sum` left out. A byte changed inside a complete line still parses; only this
 * tells.
 */
export function lineSum(content: object): string {
  return digestJson(content);
}

/** The plan as the runner records it (`PlanSpec`, camelCase as written). */
export const planSchema = z
  .object({
    policy: z.string(),
    suite: z.string(),
    tasks: z.array(z.string()),
    arms: z.array(z.string()),
    seed: z.number().int(),
    seeds: z.number().int().min(0),
    repeats: z.number().int().min(0),
    horizon: z.number().int().nullable(),
    termination: z.enum(["fixed-horizon", "first-event"]),
    scenePin: z.number().int(),
    policyOptions: z.record(z.string(), z.unknown()),
    attackParams: z.record(z.string(), z.record(z.string(), z.unknown())),
    calibration: z.record(z.string(), z.string()),
    multiplicity: z.literal("bh").exactOptional(),
    plugins: z.array(z.object({ file: z.string(), digest: z.string() }).strict()).exactOptional(),
    waivers: z.array(z.enum(["calibration-overlap", "training-scenes"])).exactOptional(),
    defenses: z
      .object({
        ids: z.array(z.string()),
        compare: z.boolean(),
        params: z.record(z.string(), z.record(z.string(), z.unknown())),
      })
      .strict()
      .exactOptional(),
  })
  .strict();

export const journalHeaderSchema = z
  .object({
    type: z.literal("header"),
    format: z.literal(JOURNAL_FORMAT),
    tool_version: z.string(),
    plan: planSchema,
    plan_digest: digest,
    shard: z.string().nullable(),
    policy_digest: z.string().nullable(),
    served_model: servedModelSchema.exactOptional(),
    bridge: z.object({ profile: z.string(), benchmark: z.string() }).strict().exactOptional(),
    sum: digest,
  })
  .strict();

export const journalRecordSchema = episodeSchema.omit({ delivered: true });

export const journalEpisodeSchema = z
  .object({
    type: z.literal("episode"),
    record: journalRecordSchema,
    trajectory: z.array(trajectoryStepSchema),
    sum: digest,
  })
  .strict();

export type JournalHeaderFile = z.infer<typeof journalHeaderSchema>;
export type JournalRecord = z.infer<typeof journalRecordSchema>;
export type JournalEpisodeLine = z.infer<typeof journalEpisodeSchema>;
export type PlanFile = z.infer<typeof planSchema>;
