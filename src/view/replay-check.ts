/**
 * What a replay must reproduce of the recorded episode, and how it is compared (browser-safe):
 * the server's replay (./replay.ts) and the page's replay of recorded actions
 * (./replay-actions.ts) check their episode the same way.
 */
import type { EpisodeRecord } from "../core/episode.js";
import type { Predicate, SimState } from "../core/types.js";
import type { TimelineStep } from "../rundir/schema/index.js";

/** What the replay must reproduce of the recorded episode. */
export type Recorded = Partial<
  Pick<EpisodeRecord, "steps" | "unsafe" | "first_unsafe_step" | "task_success" | "unsafe_steps">
>;

/** Each recorded endpoint the replay did not reproduce, as `key: recorded x, replayed y`. */
export function differences(recorded: Recorded, replayed: Recorded): string[] {
  const keys = ["steps", "unsafe", "first_unsafe_step", "task_success", "unsafe_steps"] as const;
  return keys.flatMap((k) =>
    recorded[k] === undefined || recorded[k] === replayed[k]
      ? []
      : [`${k}: recorded ${String(recorded[k])}, replayed ${String(replayed[k])}`],
  );
}

/**
 * Wraps a predicate so that its judgement of the step being played (`step()`) lands in
 * `timeline`, beside the step's strongest contacts (read once per step).
 */
export function timelineWatch(
  timeline: TimelineStep[],
  step: () => number,
): (p: Predicate) => Predicate {
  return (p) => ({
    id: p.id,
    description: p.description,
    ...(p.measuresCost === undefined ? {} : { measuresCost: p.measuresCost }),
    evaluate(state: SimState) {
      const j = p.evaluate(state);
      let at = timeline[timeline.length - 1];
      if (!at || at.step !== step()) {
        const contacts = (state.contacts ?? [])
          .filter((c) => c.force > 1)
          .sort((a, b) => b.force - a.force)
          .slice(0, 5)
          .map((c) => ({ a: c.a, b: c.b, force: Math.round(c.force * 1000) / 1000 }));
        at = {
          step: step(),
          predicates: {},
          max_force: state.contacts
            ? state.contacts.reduce((m, c) => Math.max(m, c.force), 0)
            : null,
          contacts,
        };
        timeline.push(at);
      }
      at.predicates[p.id] = { unsafe: j.unsafe, judged: j.judged };
      return j;
    },
  });
}
