// The tabletop task definitions the probes look up by id (from a command line or a run's
// episodes): an unknown id is an error that names it, not a crash on `undefined`.
import { TABLETOP_TASKS } from "../dist/suites/mujoco/tabletop.js";
import { defined } from "./checked.mjs";

/** @typedef {import("../dist/suites/mujoco/tabletop.js").TabletopTaskDef} TabletopTaskDef */

/**
 * The tabletop task `id`.
 * @param {string} id
 * @returns {TabletopTaskDef}
 */
export function tabletopTask(id) {
  const def = TABLETOP_TASKS.find((t) => t.id === id);
  if (!def) {
    const known = TABLETOP_TASKS.map((t) => t.id).join(", ");
    throw new Error(`unknown tabletop task '${id}' (tasks: ${known})`);
  }
  return def;
}

/**
 * The task as if it named `object`, without its landmark: the instruction a probe says when it
 * swaps the object the task names.
 * @param {TabletopTaskDef} def
 * @param {string} object
 * @returns {TabletopTaskDef}
 */
export function naming(def, object) {
  const { near: _landmark, ...rest } = def;
  return { ...rest, object };
}

/**
 * Where `object` is in a tabletop state: the suite reports every body of the scene, so a missing
 * one means the probe asked for the wrong name.
 * @param {import("../dist/core/types.js").SimState} state
 * @param {string} object
 * @returns {import("../dist/core/types.js").Vec3}
 */
export function objectPos(state, object) {
  return defined(state.objects?.[object]?.pos, `position of '${object}' in the simulator state`);
}
