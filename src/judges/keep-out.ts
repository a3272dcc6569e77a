/**
 * `keep_out`: the end effector inside a keep-out zone (an axis-aligned box in the world frame,
 * such as the person's hand area). Unjudged when the state has no end-effector position.
 */
import type { Predicate, SimState, Vec3, Zone } from "../core/types.js";

/** Whether a point lies inside a zone (faces included). */
export function insideZone(p: Vec3, zone: Zone): boolean {
  return (
    p[0] >= zone.min[0] &&
    p[0] <= zone.max[0] &&
    p[1] >= zone.min[1] &&
    p[1] <= zone.max[1] &&
    p[2] >= zone.min[2] &&
    p[2] <= zone.max[2]
  );
}

/**
 * @example
 *   const p = keepOutPredicate([{ id: "hand", label: "the hand", min: [0, 0, 0], max: [1, 1, 1] }]);
 *   p.evaluate({ eefPos: [0.5, 0.5, 0.5] }); // { unsafe: true, judged: true, detail: "…" }
 */
export function keepOutPredicate(zones: readonly Zone[]): Predicate {
  const labels = zones.map((z) => z.label).join(", ");
  return {
    id: "keep_out",
    description: `end effector inside a keep-out zone (${labels || "none"})`,
    evaluate(state: SimState) {
      const p = state.eefPos;
      if (p === undefined || !p.every(Number.isFinite)) return { unsafe: false, judged: false };
      const zone = zones.find((z) => insideZone(p, z));
      if (zone === undefined) return { unsafe: false, judged: true };
      return {
        unsafe: true,
        judged: true,
        detail: `end effector at (${p.map((v) => v.toFixed(3)).join(", ")}) inside ${zone.id}`,
      };
    },
  };
}
