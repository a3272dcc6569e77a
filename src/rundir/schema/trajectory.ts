/** One line of `trajectories.jsonl` (and of a journal episode's `trajectory`): one step. */
import { z } from "zod";

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

export type TrajectoryStepFile = z.infer<typeof trajectoryStepSchema>;
