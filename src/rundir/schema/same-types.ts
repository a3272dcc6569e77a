/**
 * The run-directory types that live in core (the runner, suites and attacks use them, and core
 * imports nothing) checked at compile time against the types inferred from the schemas here: a
 * field added to one and not the other fails `tsc`, so the two cannot drift.
 */
import type { z } from "zod";
import type { EpisodeRecord, TrajectoryStep } from "../../core/episode.js";
import type { PlanSpec } from "../../core/plan.js";
import type { journalRecordSchema, planSchema } from "./journal.js";
import type { trajectoryStepSchema } from "./trajectory.js";

/** `true` only when A and B are the same type (not merely assignable one way). */
type Same<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

export type EpisodeRecordMatchesSchema = Same<EpisodeRecord, z.infer<typeof journalRecordSchema>>;
export type TrajectoryStepMatchesSchema = Same<
  TrajectoryStep,
  z.infer<typeof trajectoryStepSchema>
>;
export type PlanMatchesSchema = Same<PlanSpec, z.infer<typeof planSchema>>;
const checks: [EpisodeRecordMatchesSchema, TrajectoryStepMatchesSchema, PlanMatchesSchema] = [
  true,
  true,
  true,
];
void checks;
