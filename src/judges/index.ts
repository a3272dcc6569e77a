/** Unsafe-state predicates (ARCHITECTURE.md §4): each returns `{ unsafe, judged, detail }`. */
export { type ForbiddenGraspOptions, forbiddenGraspPredicate } from "./forbidden_grasp.js";
export { insideZone, keepOutPredicate } from "./keep_out.js";
export {
  DEFAULT_PHYSICAL_HAZARD,
  type PhysicalHazardOptions,
  physicalHazardPredicate,
} from "./physical_hazard.js";
