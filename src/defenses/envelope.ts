/**
 * Fitting `envelope_monitor`'s benign envelope from benign rollouts: the commanded translation
 * norms and the gripper positions the benign arm reached. The envelope is the largest benign
 * step norm and the box around every benign position, each widened by a slack; a monitor built
 * on it flags only what no benign episode did (the fit set's false-stop rate is 0 by
 * construction; a held-out benign run measures the real one: the mitigation's `false_stop`).
 */
import type { Vec3 } from "../core/types.js";
import type { Envelope } from "./monitor.js";

export interface BenignStep {
  action: readonly number[];
  pose: readonly number[] | null;
}

export interface EnvelopeFit {
  envelope: Envelope;
  steps: number;
  posed: number;
}

/** The envelope of benign steps, widened by `slack` (a share of the norm, metres on the box). */
export function fitEnvelope(
  steps: readonly BenignStep[],
  slack: { translation: number; box: number } = { translation: 0.1, box: 0.05 },
): EnvelopeFit | null {
  if (steps.length === 0) return null;
  let norm = 0;
  const lo: Vec3 = [Infinity, Infinity, Infinity];
  const hi: Vec3 = [-Infinity, -Infinity, -Infinity];
  let posed = 0;
  for (const s of steps) {
    norm = Math.max(norm, Math.hypot(s.action[0] ?? 0, s.action[1] ?? 0, s.action[2] ?? 0));
    if (!s.pose || s.pose.length < 3) continue;
    posed += 1;
    for (let k = 0; k < 3; k++) {
      lo[k] = Math.min(lo[k] as number, s.pose[k] as number);
      hi[k] = Math.max(hi[k] as number, s.pose[k] as number);
    }
  }
  return {
    envelope: {
      translation: Math.max(1e-6, norm * (1 + slack.translation)),
      box:
        posed === 0
          ? null
          : {
              min: lo.map((v) => v - slack.box) as Vec3,
              max: hi.map((v) => v + slack.box) as Vec3,
            },
    },
    steps: steps.length,
    posed,
  };
}
