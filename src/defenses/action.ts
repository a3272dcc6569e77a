/**
 * `action_shield`: the commanded end-effector translation is projected onto the set of
 * displacements that keep the gripper out of the known keep-out zones with a margin and under a
 * speed cap (barrier.ts), from the gripper's measured position. Rotation and gripper commands
 * pass unchanged: this is a projection of the motion, not a clamp of the whole action.
 */
import { z } from "zod";
import { defineDefense } from "../core/registry.js";
import type { Action, SimState, Vec3, Zone } from "../core/types.js";
import { type Box, boxesOf, inflate, project } from "./barrier.js";

export const actionShieldParams = z
  .object({
    /** Room kept around every zone, metres. */
    margin: z.number().min(0).max(0.5).default(0.02),
    /** Barrier rate γ: the share of the distance to a zone one step may close. */
    gamma: z.number().gt(0).max(1).default(0.5),
    /** Largest commanded displacement per step, metres. */
    speed_cap: z.number().gt(0).default(0.012),
    /** Metres per unit of translation action (the MuJoCo suites' controller: 15 mm per tick). */
    step_metres: z.number().gt(0).default(0.015),
    /**
     * Also keep out of a box around each fragile and forbidden object (from its measured pose),
     * half-extent `object_half` metres.
     */
    objects: z.boolean().default(true),
    object_half: z.number().min(0).max(0.5).default(0.03),
  })
  .strict();
export type ActionShieldParams = z.infer<typeof actionShieldParams>;

/** The boxes a shield keeps out of at one state: the zones and the hazard objects' boxes. */
export function shieldBoxes(
  zones: readonly Zone[],
  objects: readonly string[],
  state: SimState,
  p: ActionShieldParams,
): Box[] {
  const boxes = boxesOf(zones).map((b) => inflate(b, p.margin));
  if (!p.objects) return boxes;
  for (const name of objects) {
    const pose = state.objects?.[name];
    if (!pose) continue;
    const h = p.object_half + p.margin;
    boxes.push({
      id: name,
      min: pose.pos.map((v) => v - h) as Vec3,
      max: pose.pos.map((v) => v + h) as Vec3,
    });
  }
  return boxes;
}

/** The shielded action: the projected translation, everything else as commanded. */
export function shieldAction(
  action: Action,
  eef: Vec3,
  boxes: readonly Box[],
  p: ActionShieldParams,
  low: readonly number[],
  high: readonly number[],
): { action: Action; changed: boolean } {
  const delta: Vec3 = [0, 1, 2].map((k) => {
    const v = Math.max(low[k] ?? -1, Math.min(high[k] ?? 1, action[k] ?? 0));
    return v * p.step_metres;
  }) as Vec3;
  const speed = Math.min(p.speed_cap, p.step_metres);
  const out = project(eef, delta, boxes, p.gamma, speed);
  if (!out.changed) return { action, changed: false };
  const shielded = Float32Array.from(action);
  for (let k = 0; k < 3; k++) shielded[k] = (out.delta[k] as number) / p.step_metres;
  return { action: shielded, changed: true };
}

export const actionShield = defineDefense({
  id: "action_shield",
  kind: "action",
  description:
    "Discrete-time control-barrier-function projection of the commanded end-effector motion: the nearest displacement that keeps the gripper out of every keep-out zone (the calibration's or the suite's) and every hazard object's box with a margin, under a speed cap; rotation and gripper pass unchanged",
  requires: {},
  params: actionShieldParams,
  begin: ({ params, zones, task, suite }) => {
    const objects = [...task.hazard.fragile, ...task.hazard.forbidden];
    let projected = 0;
    let blind = 0;
    return {
      actuate(action: Action, _step: number, state: SimState): Action {
        // Without a measured pose there is nothing to project from: the command passes, counted.
        if (!state.eefPos) {
          blind += 1;
          return action;
        }
        const boxes = shieldBoxes(zones, objects, state, params);
        const out = shieldAction(
          action,
          state.eefPos,
          boxes,
          params,
          suite.actionSpace.low,
          suite.actionSpace.high,
        );
        if (out.changed) projected += 1;
        return out.action;
      },
      summary: () => ({ projected_steps: projected, unposed_steps: blind }),
    };
  },
});
