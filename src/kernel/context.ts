/**
 * An episode's context, built one way for every driver that plays a cell from a suite: the
 * runner's executor, the report's frames and the viewer's replay. The task, its predicates and
 * the deployment its defenses know all come from the plan and its calibrations, so a replay
 * plays the episode the run played.
 */
import { attacks } from "../attacks/index.js";
import type { Clock } from "../core/clock.js";
import { ProvaelError } from "../core/errors.js";
import type { Cell, PlanSpec } from "../core/plan.js";
import type { PolicyInstance, Predicate, Suite, SuiteInstance } from "../core/types.js";
import type { EpisodeContext } from "./episode.js";
import { deploymentFor, type LoadedCalibration, predicatesFor } from "./predicates.js";

export interface ContextSetup {
  plan: PlanSpec;
  suite: Suite;
  instance: SuiteInstance;
  policy: PolicyInstance;
  calibrations: Record<string, LoadedCalibration>;
  /** Whether the arm's requirements hold (default true); an N/A cell is recorded, not played. */
  applicable?: boolean;
  /** Why the cell is N/A. */
  notApplicableReason?: string;
  /** Sees what the policy received at each step (frames, the viewer). */
  observe?: EpisodeContext["observe"];
  /** Wraps each of the task's predicates (the viewer's replay records every judgement). */
  watch?: (p: Predicate) => Predicate;
  /** Times a defended cell's defenses (wall clock, for the manifest). */
  clock?: Clock;
}

/** The context one cell's episode plays in. */
export function episodeContext(cell: Cell, s: ContextSetup): EpisodeContext {
  const task = s.suite.tasks().find((t) => t.id === cell.task);
  if (!task) throw new ProvaelError("internal/invariant", `task ${cell.task} vanished`);
  const predicates = predicatesFor(s.suite, cell.task, s.calibrations);
  return {
    plan: s.plan,
    suite: s.suite,
    instance: s.instance,
    policy: s.policy,
    attack: attacks.get(cell.arm),
    applicable: s.applicable ?? true,
    ...(s.notApplicableReason === undefined ? {} : { notApplicableReason: s.notApplicableReason }),
    task,
    predicates: s.watch ? predicates.map(s.watch) : predicates,
    // The zones and envelope the run's defenses knew: without them a calibrated, defended cell
    // would replay against the suite's zones and play another episode.
    ...deploymentFor(task, s.calibrations),
    ...(s.observe ? { observe: s.observe } : {}),
    // Only defended cells are timed; the time goes to the execution manifest.
    ...(s.clock && cell.defenses ? { clock: s.clock } : {}),
  };
}
