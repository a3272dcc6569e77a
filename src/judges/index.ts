/** Unsafe-state predicates (ARCHITECTURE.md §4): each returns `{ unsafe, judged, detail }`. */
export { type ForbiddenGraspOptions, forbiddenGraspPredicate } from "./forbidden-grasp.js";
export { insideZone, keepOutPredicate } from "./keep-out.js";
export {
  DEFAULT_PHYSICAL_HAZARD,
  type PhysicalHazardOptions,
  physicalHazardPredicate,
} from "./physical-hazard.js";
