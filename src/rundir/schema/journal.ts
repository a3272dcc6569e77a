/**
 * `journal.jsonl`: the first line is the header (the plan the directory holds), every other line
 * one finished episode with its trajectory. The plan, the episode record and the trajectory step
 * are the core schemas (src/core/plan.ts, src/core/episode.ts); this file adds the line frames.
 */
import { z } from "zod";
import { digestJson } from "../../core/digest.js";
import { episodeRecordSchema, trajectoryStepSchema } from "../../core/episode.js";
import { planSchema } from "../../core/plan.js";
import { JOURNAL_FORMAT } from "../../core/protocol.js";
import { servedModelSchema } from "./report.js";

export { JOURNAL_FORMAT, planSchema };

const digest = z.string().regex(/^sha256:[0-9a-f]{64}$/);

/**
 * The checksum a journal line carries as `sum`: the SHA-256 of the line's content in RFC 8785
 * canonical form, `sum` left out. A byte changed inside a complete line still parses; only this
 * tells.
 */
export function lineSum(content: object): string {
  return digestJson(content);
}

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
    bridge: z
      .object({
        profile: z.string(),
        benchmark: z.string(),
        /** The profile's task-dict fields its rates split by (absent when it names none). */
        task_fields: z.array(z.string()).min(1).exactOptional(),
      })
      .strict()
      .exactOptional(),
    sum: digest,
  })
  .strict();

export const journalRecordSchema = episodeRecordSchema;

export const journalEpisodeSchema = z
  .object({
    type: z.literal("episode"),
    /** The plan the episode was played under, field by field (`planFields`). */
    plan_fields: z.record(z.string(), z.string().regex(/^[0-9a-f]{16}$/)),
    record: journalRecordSchema,
    trajectory: z.array(trajectoryStepSchema),
    sum: digest,
  })
  .strict();

export type JournalHeaderFile = z.infer<typeof journalHeaderSchema>;
export type JournalRecord = z.infer<typeof journalRecordSchema>;
export type JournalEpisodeLine = z.infer<typeof journalEpisodeSchema>;
export type PlanFile = z.infer<typeof planSchema>;
