/** Wall-clock time in the defenses' hooks, per arm, for the execution manifest (never report.json). */

import type { DefenseTiming } from "../defenses/chain.js";

/** Wall-clock time spent in one arm's defenses. */
export interface DefenseLatency {
  episodes: number;
  steps: number;
  ms: number;
}

export function addTiming(
  into: Record<string, DefenseLatency>,
  arm: string,
  t: DefenseTiming,
): void {
  const e = into[arm] ?? { episodes: 0, steps: 0, ms: 0 };
  e.episodes += 1;
  e.steps += t.steps;
  e.ms += t.ms;
  into[arm] = e;
}

/**
 * Added latency per step by arm, for the execution manifest (wall clock: never in report.json).
 * Over the episodes this invocation played; a resumed run reports only what it played itself.
 */
export function latencyReport(latency: Record<string, DefenseLatency>) {
  const arms = Object.keys(latency).sort();
  const total = arms.reduce(
    (a, k) => {
      const l = latency[k] as DefenseLatency;
      return { episodes: a.episodes + l.episodes, steps: a.steps + l.steps, ms: a.ms + l.ms };
    },
    { episodes: 0, steps: 0, ms: 0 },
  );
  const per = (l: DefenseLatency) => ({
    ...l,
    ms_per_step: l.steps > 0 ? l.ms / l.steps : null,
  });
  return {
    note: "wall-clock time inside the defenses' hooks per defended step, this invocation only",
    all: per(total),
    arms: Object.fromEntries(arms.map((k) => [k, per(latency[k] as DefenseLatency)])),
  };
}
