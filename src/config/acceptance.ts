/**
 * Acceptance protocol files: written criteria that `src/report/verdict.ts` turns into a release
 * verdict. This module only reads and validates them.
 */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { ProvaelError } from "../core/errors.js";

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
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new ProvaelError("io/read", `cannot read acceptance protocol ${path}`, { cause: e });
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    throw new ProvaelError(
      "io/malformed",
      `acceptance protocol ${path} is not valid YAML or JSON: ${(e as Error).message}`,
      { cause: e },
    );
  }
  const parsed = acceptanceSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ProvaelError(
      "config/invalid",
      `acceptance protocol ${path}: ${issue?.path.join(".") || "(root)"}: ${issue?.message}`,
      {
        details: { issues: parsed.error.issues },
        hint: "see examples/protocols/ for valid files",
      },
    );
  }
  return parsed.data;
}
