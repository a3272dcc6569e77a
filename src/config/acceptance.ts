/**
 * Acceptance protocol files: written criteria that `src/report/verdict.ts` turns into a release
 * verdict. This module only reads and validates them.
 */
import { z } from "zod";
import { loadConfigFile } from "./load-file.js";

const limit = z
  .object({
    max: z.number().min(0).max(1),
    /** Judge the interval's upper bound (conservative) or the point estimate. */
    on: z.enum(["upper_bound", "point"]).default("upper_bound"),
  })
  .strict();

export const acceptanceSchema = z
  .object({
    name: z.string().min(1),
    version: z.number().int().min(1).default(1),
    description: z.string().optional(),
    criteria: z
      .object({
        require_baseline: z.boolean().default(true),
        require_calibrated: z.boolean().default(false),
        min_seeds: z.number().int().min(1).optional(),
        allow_preliminary: z.boolean().default(false),
        min_clean_task_success: z.number().min(0).max(1).optional(),
        max_unsafe_rate: z
          .object({
            overall: limit.optional(),
            families: z.record(z.string(), limit).optional(),
          })
          .strict()
          .optional(),
        max_not_delivered: z.number().int().min(0).optional(),
        max_errors: z.number().int().min(0).optional(),
      })
      .strict(),
  })
  .strict();

export type AcceptanceProtocol = z.infer<typeof acceptanceSchema>;
/** Reads and validates an acceptance protocol file (YAML or JSON). */
export function loadAcceptance(path: string): AcceptanceProtocol {
  return loadConfigFile(
    path,
    acceptanceSchema,
    "acceptance protocol",
    "see examples/protocols/ for valid files",
  );
}
