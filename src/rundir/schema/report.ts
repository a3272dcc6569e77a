/**
 * The zod schema of `report.json`, the contract of ARCHITECTURE.md ("report.json at a glance").
 * `schema/report.schema.json` is generated from it (`npm run schema`); a test fails when stale.
 */
import { z } from "zod";
import { episodeSchema } from "../../core/episode.js";
import { multiplicitySchema, terminationSchema, waiverSchema } from "../../core/plan.js";
import { PROTOCOL, REPORT_SCHEMA } from "../../core/protocol.js";
import { attackAccessSchema, attackRoleSchema, eaiRiskSchema } from "../../core/vocabulary.js";

const interval = z.object({
  method: z.literal("wilson"),
  confidence: z.number(),
  low: z.number().min(0).max(1),
  high: z.number().min(0).max(1),
});

export const rateSchema = z
  .object({
    successes: z.number().int().min(0),
    n: z.number().int().min(0),
    rate: z.number().min(0).max(1).nullable(),
    interval: interval.nullable(),
    anytime: z
      .object({
        method: z.literal("beta-binomial-mixture"),
        alpha: z.number(),
        low: z.number(),
        high: z.number(),
      })
      .nullable()
      .exactOptional(),
    clustered: z
      .object({
        method: z.enum(["task-cluster-bootstrap", "episode-cluster-bootstrap"]),
        confidence: z.number(),
        resamples: z.number().int(),
        clusters: z.number().int(),
        low: z.number(),
        high: z.number(),
      })
      .nullable()
      .exactOptional(),
    clustered_reason: z.string().exactOptional(),
  })
  .strict()
  .describe("RATE: successes over n with its interval; rate and interval are null when n = 0");

export { episodeSchema };

const vsBaseline = z
  .object({
    // Secondary: one-sided unpaired Fisher exact on the arms' own counts.
    fisher_p: z.number().min(0).max(1).nullable(),
    // Secondary: fisher_p after Benjamini-Hochberg across treatment arms.
    bh_q: z.number().min(0).max(1).nullable(),
    // Secondary: exact McNemar, two-sided (a safer arm is as "significant" as a less safe one).
    mcnemar_p: z.number().min(0).max(1).nullable(),
    // Secondary: the two-sided mcnemar_p after Holm across treatment arms.
    holm_p: z.number().min(0).max(1).nullable(),
    // [b, c]: b = this arm unsafe and its twin safe, c = the reverse.
    discordant: z.tuple([z.number().int(), z.number().int()]).nullable(),
    pairs: z.number().int(),
    // Primary: one-sided exact McNemar for an increase, P(X >= b), X ~ Bin(b + c, 1/2).
    primary_p: z.number().min(0).max(1).nullable(),
    // primary_p after the declared multiplicity procedure (treatment arms only).
    adjusted_p: z.number().min(0).max(1).nullable(),
    // adjusted_p < alpha; null when the arm is not in the family (a control, or no pairs).
    significant: z.boolean().nullable(),
  })
  .strict();

const vsAttack = z
  .object({
    arm: z.string(),
    pairs: z.number().int(),
    discordant: z.tuple([z.number().int(), z.number().int()]).nullable(),
    primary_p: z.number().min(0).max(1).nullable(),
    adjusted_p: z.number().min(0).max(1).nullable(),
    significant: z.boolean().nullable(),
  })
  .strict()
  .describe("on a control: its matched attack tested against it on the same pinned cells");

const arm = z
  .object({
    family: z.string(),
    role: attackRoleSchema,
    eai: eaiRiskSchema.nullable(),
    access: attackAccessSchema,
    matches: z.string().exactOptional(),
    episodes: z.number().int(),
    scenes: z
      .number()
      .int()
      .exactOptional()
      .describe("distinct (task, scene) pairs among the arm's counted episodes"),
    not_applicable: z.number().int(),
    unjudged: z.number().int(),
    errors: z.number().int(),
    not_delivered: z.number().int(),
    unsafe: rateSchema,
    task_success: rateSchema,
    succ_but_unsafe: rateSchema,
    mean_unsafe_steps: z.number().nullable(),
    risk_exposure: rateSchema.describe(
      "unsafe steps over judged steps of the judged episodes; Wilson treats steps as independent, the episode-clustered bootstrap does not",
    ),
    cumulative_cost: z
      .object({
        unit: z.literal("N·step"),
        episodes: z.number().int(),
        total: z.number().min(0),
        mean: z.number().min(0),
        max: z.number().min(0),
      })
      .strict()
      .nullable()
      .describe(
        "excess force over the physical predicates' thresholds; null when none measures force",
      ),
    budget_use: z
      .object({
        kind: z.enum(["queries", "pgd-steps", "bit-flips"]),
        episodes: z.number().int(),
        used_total: z.number(),
        used_mean: z.number(),
        used_max: z.number(),
        limit: z.number().nullable(),
      })
      .strict()
      .nullable()
      .describe("what the arm's attack spent per counted episode; null when it spends nothing"),
    vs_baseline: vsBaseline.nullable(),
    vs_attack: vsAttack.nullable().exactOptional(),
    not_applicable_reason: z
      .string()
      .nullable()
      .describe("why the arm is N/A (its attack's unmet requirement); null when it played"),
    fired: z
      .record(
        z.string(),
        z.object({ episodes: z.number().int(), after_success: z.number().int() }).strict(),
      )
      .describe(
        "per predicate that fired: judged episodes in which it did, and how many of those only after task success",
      ),
    stopped: rateSchema
      .exactOptional()
      .describe("defended arms only: episodes a defense stopped over the arm's scored episodes"),
  })
  .strict();

const pairedDifference = z
  .object({
    method: z.literal("newcombe-paired-hybrid-score"),
    confidence: z.number(),
    // Undefended minus defended rate on the pairs (positive: the defense helped).
    estimate: z.number().nullable(),
    low: z.number(),
    high: z.number(),
  })
  .strict();

const armMitigation = z
  .object({
    role: attackRoleSchema,
    // Pairs whose two episodes were both judged (the same cell, both ways).
    pairs: z.number().int(),
    undefended_unsafe: rateSchema,
    defended_unsafe: rateSchema,
    // [b, c]: b = unsafe undefended and not defended (prevented), c = the reverse (caused).
    discordant: z.tuple([z.number().int(), z.number().int()]).nullable(),
    // One-sided exact McNemar for a reduction, P(X >= b), X ~ Bin(b + c, 1/2).
    reduction_p: z.number().min(0).max(1).nullable(),
    // reduction_p after Holm across the run's treatment arms.
    adjusted_p: z.number().min(0).max(1).nullable(),
    significant: z.boolean().nullable(),
    reduction: pairedDifference.nullable(),
    stopped: rateSchema,
    undefended_task_success: rateSchema,
    defended_task_success: rateSchema,
    task_success_cost: pairedDifference.nullable(),
  })
  .strict();

const mitigation = z
  .object({
    defenses: z.array(z.string()),
    params: z.record(z.string(), z.record(z.string(), z.unknown())),
    stop_rule: z.string(),
    test: z
      .object({
        test: z.literal("exact-mcnemar"),
        alternative: z.literal("reduction"),
        pairs: z.literal("same cell undefended and defended"),
        multiplicity: z.literal("holm"),
        alpha: z.number(),
        interval: z.literal("newcombe-paired-hybrid-score"),
      })
      .strict(),
    arms: z.record(z.string(), armMitigation),
    price: z
      .object({
        arm: z.string(),
        false_stop: rateSchema,
        task_success_cost: pairedDifference.nullable(),
      })
      .strict()
      .nullable(),
    latency: z.string(),
  })
  .strict()
  .describe("--compare-defenses only: every arm undefended vs defended, paired cell by cell");

/** What a served policy's server reported about the model behind it (unverified). */
export const servedModelSchema = z
  .object({
    protocol: z.string(),
    name: z.string().nullable(),
    digest: z.string().nullable(),
  })
  .strict()
  .describe("the model behind a served policy, as its server reported it when connected");

const summary = z
  .object({
    treatment_unsafe: rateSchema,
    baseline_unsafe: rateSchema,
    control_unsafe: rateSchema,
    all_unsafe: rateSchema,
    clean_task_success: rateSchema,
    succ_but_unsafe: rateSchema,
    preliminary: z.boolean(),
    significance: z
      .object({
        test: z.literal("exact-mcnemar"),
        alternative: z.literal("greater"),
        pairs: z.literal("pinned"),
        multiplicity: multiplicitySchema,
        alpha: z.number(),
        tested: z.number().int(),
        controls_tested: z.number().int(),
        secondary: z
          .object({
            fisher_p: z.string(),
            bh_q: z.string(),
            mcnemar_p: z.string(),
            holm_p: z.string(),
          })
          .strict(),
      })
      .strict()
      .nullable()
      .describe("the run's one significance rule; every 'significant' follows from it"),
  })
  .strict();

export const reportSchema = z
  .object({
    schema: z.literal(REPORT_SCHEMA),
    protocol: z.literal(PROTOCOL),
    tool_version: z.string(),
    run: z
      .object({
        policy: z.string(),
        suite: z.string(),
        policy_digest: z.string().nullable(),
        tasks: z.array(z.string()),
        arms: z.array(z.string()),
        seed: z.number().int(),
        seeds: z.number().int(),
        repeats: z.number().int(),
        horizon: z.number().int().nullable(),
        termination: terminationSchema,
        scene_pin: z.number().int(),
        shard: z.string().nullable(),
        attack_params: z
          .record(z.string(), z.record(z.string(), z.unknown()))
          .exactOptional()
          .describe("every arm's parameters as played, defaults included"),
        policy_options: z
          .record(z.string(), z.unknown())
          .exactOptional()
          .describe(
            "policy options that change behaviour (weights path, replan, …), secrets redacted",
          ),
        plugins: z
          .array(z.object({ file: z.string(), digest: z.string() }).strict())
          .exactOptional()
          .describe("plugin files the run loaded (--plugin), by file name and SHA-256"),
        served_model: servedModelSchema
          .exactOptional()
          .describe("served policies: the model their server reported (name, digest when known)"),
        bridge: z
          .object({
            profile: z.string(),
            benchmark: z.string(),
            termination: z.literal("benchmark"),
            image_codecs: z.record(z.string(), z.number().int()),
            steps_forwarded: z.number().int().optional(),
            steps_used: z.number().int().nullable().optional(),
            task_fields: z
              .array(z.string())
              .min(1)
              .exactOptional()
              .describe(
                "the profile's task-dict fields that describe a task beyond its name (LIBERO-Plus: category, difficulty_level); `by_task_field` splits the rates by them",
              ),
          })
          .strict()
          .exactOptional()
          .describe("set when a benchmark drove the episodes through `provael bridge`"),
        waivers: z
          .array(waiverSchema)
          .default([])
          .describe("scene checks the run waived; each is printed in the headline"),
        defenses: z
          .object({
            ids: z.array(z.string()),
            compare: z.boolean(),
            params: z.record(z.string(), z.record(z.string(), z.unknown())),
            never_adaptive: z.array(z.string()),
          })
          .strict()
          .exactOptional()
          .describe(
            "set when the run played defenses; never_adaptive: those no arm of the run attacked adaptively",
          ),
      })
      .strict(),
    arms: z.record(z.string(), arm),
    summary,
    tests: z
      .object({
        baseline_arm: z.string().nullable(),
        note: z.string(),
        significance_level: z.number(),
      })
      .strict(),
    by_task: z.record(z.string(), z.record(z.string(), rateSchema)),
    by_task_field: z
      .record(
        z.string(),
        z.record(
          z.string(),
          z.record(z.string(), z.object({ unsafe: rateSchema, task_success: rateSchema }).strict()),
        ),
      )
      .exactOptional()
      .describe(
        "bridged runs whose episodes carry the profile's task fields (run.bridge.task_fields) only: field → value → arm → the unsafe rate and the task-success rate of that arm's episodes whose task dict has that value (counted as `arms`' rates; episodes without the field are in no row)",
      ),
    calibration: z.record(
      z.string(),
      z
        .object({
          predicate: z.string(),
          source: z.string(),
          digest: z.string().nullable(),
          target_fpr: z
            .number()
            .gt(0)
            .lt(1)
            .exactOptional()
            .describe("calibrated tasks: the false-positive rate the keep-out zone was fitted for"),
          measured_fpr: rateSchema
            .exactOptional()
            .describe(
              "calibrated tasks: the false positives the calibration measured on its held-out (evaluate) split, over its episodes, with the interval it declares",
            ),
          overlap: z
            .object({ scenes: z.number().int().min(0), of: z.number().int().min(0) })
            .strict()
            .exactOptional()
            .describe(
              "calibrated tasks: of the run's `of` scenes of the task, how many the calibration fitted or thresholded on (unsafe there is judged in-sample)",
            ),
        })
        .strict(),
    ),
    termination_counts: z.record(z.string(), z.number().int()),
    error_counts: z.record(z.string(), z.number().int()),
    episodes: z.array(episodeSchema),
    defended: z
      .object({
        arms: z.record(z.string(), arm),
        summary,
        by_task: z.record(z.string(), z.record(z.string(), rateSchema)),
      })
      .strict()
      .exactOptional()
      .describe("--compare-defenses only: the arms and summary over the defended episodes"),
    mitigation: mitigation.exactOptional(),
    trajectories_digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  })
  .strict();

/** JSON Schema (draft 2020-12) of report.json, as committed under schema/. */
export function reportJsonSchema(): Record<string, unknown> {
  return {
    $id: "urn:provael:schema:report:1",
    title: "Provael report.json (provael.report/1, protocol provael-redteam/v2)",
    ...(z.toJSONSchema(reportSchema, { target: "draft-2020-12" }) as Record<string, unknown>),
  };
}
