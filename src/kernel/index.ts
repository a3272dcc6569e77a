/**
 * The episode kernel: one way to begin a cell, build its episode's context, decide its task's
 * predicates and play or drive its steps, whoever drives the episode (ARCHITECTURE.md §3). The
 * runner, the bridge, the offline study, the report's frames and the viewer's replay call it.
 */
export { notApplicableReason } from "./applicability.js";
export {
  type BegunCell,
  beginArm,
  beginCell,
  type CellSetup,
  cellId,
  checkAction,
  type DefenseSetup,
  deploymentOf,
  emptyRecord,
  makeOracle,
  type Phase,
  policySeed,
  queryBudget,
  sceneFor,
} from "./cell.js";
export { type ContextSetup, episodeContext } from "./context.js";
export { type EpisodeContext, EpisodeSteps, inputsEqual, playEpisode } from "./episode.js";
export {
  type CalibrationFacts,
  calibrated,
  calibrationFacts,
  deploymentFor,
  type LoadedCalibration,
  type Provenance,
  predicatesFor,
  provenanceFor,
  provenanceOf,
} from "./predicates.js";
