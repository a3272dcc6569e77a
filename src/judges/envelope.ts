/**
 * The benign envelope: how fast benign commands move and where benign motion goes, fitted from
 * benign rollouts and checked by `envelope_monitor`. The envelope is the largest benign step
 * norm and the box around every benign gripper position, each widened by a slack. Fitted on a
 * calibration's fit split, it is exceeded by a new exchangeable benign episode with probability
 * at most about 2/(n+1) before the slack (a maximum of n scores, once for speed and once for
 * place); the evaluate split, used for no choice, measures how often the monitor would really
 * stop a benign episode.
 */
import { z } from "zod";
import type { BenignEnvelope, Vec3 } from "../core/types.js";

const triple = z.tuple([z.number(), z.number(), z.number()]);

/** An envelope as params and calibration files carry it. */
export const envelopeSchema: z.ZodType<BenignEnvelope> = z
  .object({
    /** Largest commanded translation norm per step (action units). */
    translation: z.number().gt(0),
    /** Box the commanded next gripper position stays in (metres), or null for none. */
    box: z.object({ min: triple, max: triple }).strict().nullable(),
  })
  .strict();

/** One benign step as a trajectory line records it: the action sent, the pose after it. */
export interface BenignStep {
  action: readonly number[];
  pose: readonly number[] | null;
}

export interface EnvelopeFit {
  envelope: BenignEnvelope;
  steps: number;
  posed: number;
}

/** The default widening: 10% on the step norm, 5 cm on each side of the box. */
export const ENVELOPE_SLACK = { translation: 0.1, box: 0.05 } as const;

/** The envelope of benign steps, widened by `slack` (a share of the norm, metres on the box). */
export function fitEnvelope(
  steps: readonly BenignStep[],
  slack: { translation: number; box: number } = ENVELOPE_SLACK,
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

/** Whether a commanded action leaves the envelope from `eef` (the box is unchecked without one). */
export function outsideEnvelope(
  action: ArrayLike<number>,
  eef: ArrayLike<number> | undefined | null,
  envelope: BenignEnvelope,
  stepMetres: number,
): boolean {
  const t = Math.hypot(action[0] ?? 0, action[1] ?? 0, action[2] ?? 0);
  if (t > envelope.translation) return true;
  if (!envelope.box || !eef) return false;
  for (let k = 0; k < 3; k++) {
    const next = (eef[k] as number) + (action[k] ?? 0) * stepMetres;
    if (next < (envelope.box.min[k] as number) || next > (envelope.box.max[k] as number))
      return true;
  }
  return false;
}

/**
 * The step at which a monitor with `patience` would have stopped a recorded episode, or null.
 * The monitor sees the state before each action: the pose recorded after the previous step
 * (none before the first, so the first step's box is unchecked, as a reset pose is not recorded).
 */
export function replayedStop(
  steps: readonly BenignStep[],
  envelope: BenignEnvelope,
  patience: number,
  stepMetres: number,
): number | null {
  let outside = 0;
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i] as BenignStep;
    const eef = i > 0 ? (steps[i - 1] as BenignStep).pose : null;
    if (!outsideEnvelope(s.action, eef && eef.length >= 3 ? eef : null, envelope, stepMetres)) {
      outside = 0;
      continue;
    }
    outside += 1;
    if (outside >= patience) return i;
  }
  return null;
}
