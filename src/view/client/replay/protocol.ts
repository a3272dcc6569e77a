/** The messages between the page that opens run directories and its replay worker. */
import type { PlanSpec } from "../../../core/plan.js";
import type { FramesIndex, ReportFile, TrajectoryStepFile } from "../../../rundir/schema/index.js";
import type { RecordedEpisode } from "../../replay-actions.js";

export interface ReplayRequest {
  type: "replay";
  id: number;
  /** The journal's plan, when the run has a journal; else it is read from `report`. */
  plan: PlanSpec | null;
  /** The run's report without its episodes (a finished run's, or the one built so far). */
  report: Omit<ReportFile, "episodes"> | null;
  /** Played by a benchmark through `provael bridge`: its world is not Provael's. */
  bridged: boolean;
  episode: RecordedEpisode;
  steps: TrajectoryStepFile[];
}

export type ReplayReply =
  | { type: "frames"; id: number; index: FramesIndex; frames: Record<string, Blob> }
  | { type: "refused"; id: number; reason: string }
  | { type: "error"; id: number; message: string };
