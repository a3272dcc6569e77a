/** One line of `trajectories.jsonl` (and of a journal episode's `trajectory`): one step. */
import type { z } from "zod";
import { trajectoryStepSchema } from "../../core/episode.js";

export { trajectoryStepSchema };
export type TrajectoryStepFile = z.infer<typeof trajectoryStepSchema>;
