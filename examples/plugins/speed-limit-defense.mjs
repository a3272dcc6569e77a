// A defense as a plugin: an action filter that caps the commanded translation's norm, leaving
// rotation and gripper as commanded, and counts the steps it capped.
// Run it: provael attack --plugin examples/plugins/speed-limit-defense.mjs \
//   --attacks none,trajectory_hijack --compare-defenses speed_limit --defense-param speed_limit.max=0.5
import { defineDefense, z } from "provael";

export const speedLimit = defineDefense({
  id: "speed_limit",
  kind: "action",
  description: "Caps the norm of the commanded translation at `max` (action units)",
  requires: {},
  params: z.object({ max: z.number().gt(0).default(0.6) }).strict(),
  begin: ({ params }) => {
    let capped = 0;
    return {
      actuate(action) {
        const norm = Math.hypot(action[0], action[1], action[2]);
        if (norm <= params.max) return action;
        capped += 1;
        const out = Float32Array.from(action);
        for (let k = 0; k < 3; k++) out[k] = (action[k] * params.max) / norm;
        return out;
      },
      summary: () => ({ capped_steps: capped }),
    };
  },
});
