/**
 * The plan and cell every layer shares (the runner makes plans into cells; the report, the bridge
 * and merge read them), declared once as zod schemas: the types are inferred from them, and the
 * journal, the report, the recipes and the command-line choices read the same enums.
 */
import { z } from "zod";
import { digestJson } from "./digest.js";

/** How an episode ends: its full horizon, or at the first unsafe step or task success. */
export const TERMINATIONS = ["fixed-horizon", "first-event"] as const;
export const terminationSchema = z.enum(TERMINATIONS);
export type Termination = z.infer<typeof terminationSchema>;

/** The multiplicity procedure of the primary test across treatment arms (Holm: FWER, BH: FDR). */
export const MULTIPLICITIES = ["holm", "bh"] as const;
export const multiplicitySchema = z.enum(MULTIPLICITIES);
export type Multiplicity = z.infer<typeof multiplicitySchema>;

/**
 * A check the run chose to skip, recorded in the plan and printed in the report's headline:
 * scoring on a calibration's fit or threshold scenes, or on the policy's training scenes.
 */
export const WAIVERS = ["calibration-overlap", "training-scenes"] as const;
export const waiverSchema = z.enum(WAIVERS);
export type Waiver = z.infer<typeof waiverSchema>;

/** Parameters that differ from a plugin's defaults, by plugin id. */
const paramsById = z.record(z.string(), z.record(z.string(), z.unknown()));

/**
 * Defenses: `ids` in loop order, given to every cell (`--defenses`), or, with `compare`, every
 * cell played undefended and defended (`--compare-defenses`); `params` holds the values that
 * differ from the defaults.
 */
export const defensePlanSchema = z
  .object({ ids: z.array(z.string()), compare: z.boolean(), params: paramsById })
  .strict();
export type DefensePlan = z.infer<typeof defensePlanSchema>;

/** A plugin file a run loads, by name and digest. */
export const pluginFileSchema = z.object({ file: z.string(), digest: z.string() }).strict();

export const planSchema = z
  .object({
    policy: z.string(),
    suite: z.string(),
    tasks: z.array(z.string()),
    arms: z.array(z.string()),
    seed: z.number().int(),
    seeds: z.number().int().min(0),
    repeats: z.number().int().min(0),
    /** Steps per episode; null means each task's own default horizon. */
    horizon: z.number().int().nullable(),
    termination: terminationSchema,
    scene_pin: z.number().int(),
    /** Policy options that change behaviour (path, replan, …); recorded so a resume must match. */
    policy_options: z.record(z.string(), z.unknown()),
    /**
     * A served policy's address (one server; a pool is operational, in the execution manifest),
     * its secrets redacted: a resume against another server is refused.
     */
    policy_url: z.string().exactOptional(),
    /** Per-arm attack parameters that differ from the defaults (budgets, bounds). */
    attack_params: paramsById,
    /** Per task, the digest of the calibration file that scores it (absent: suite defaults). */
    calibration: z.record(z.string(), z.string()),
    /**
     * The multiplicity procedure of the report's primary test across treatment arms; absent
     * means Holm (the default is left out so plans written before the option keep their digests).
     */
    multiplicity: z.literal("bh").exactOptional(),
    /**
     * Plugin files the run loads (absent when none): part of the plan, so a resume or replay
     * with a changed plugin is refused.
     */
    plugins: z.array(pluginFileSchema).exactOptional(),
    /** Checks waived by flag (absent when none, so older plans keep their digests). */
    waivers: z.array(waiverSchema).exactOptional(),
    /** Defenses (absent when none, so older plans keep their digests). */
    defenses: defensePlanSchema.exactOptional(),
  })
  .strict();
export type PlanSpec = z.infer<typeof planSchema>;

export const cellSchema = z
  .object({
    id: z.string(),
    task: z.string(),
    arm: z.string(),
    seed: z.number().int(),
    repeat: z.number().int(),
    /** The defenses this cell plays with, in loop order (absent: undefended). */
    defenses: z.array(z.string()).exactOptional(),
  })
  .strict();
export type Cell = z.infer<typeof cellSchema>;

/**
 * A plan field by field: each field's digest (16 hex digits of the SHA-256 of its canonical
 * JSON). Every journal line carries its plan's fields, so a line copied in from a run of another
 * plan is refused with the field that differs, not counted.
 */
export function planFields(spec: PlanSpec): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(spec).sort()) {
    const value = (spec as Record<string, unknown>)[key];
    if (value !== undefined) out[key] = digestJson(value).slice(7, 23);
  }
  return out;
}

/** The fields in which two plans' fingerprints (`planFields`) differ, in key order. */
export function differingFields(a: Record<string, string>, b: Record<string, string>): string[] {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys.filter((k) => a[k] !== b[k]);
}

/** Digest identifying a plan; two runs with one plan digest play the same cells. */
export function planDigest(spec: PlanSpec): string {
  return digestJson(spec);
}

/** Field-by-field differences between two plans, for resume and merge errors. */
export function planDifferences(a: PlanSpec, b: PlanSpec): string[] {
  const diffs: string[] = [];
  for (const key of Object.keys(a) as (keyof PlanSpec)[]) {
    if (digestJson(a[key] ?? null) !== digestJson(b[key] ?? null)) {
      diffs.push(`${key}: ${JSON.stringify(a[key])} vs ${JSON.stringify(b[key])}`);
    }
  }
  return diffs;
}
