/**
 * The discrete-time control-barrier-function projection behind `action_shield`.
 *
 * For a keep-out box B inflated by a margin, h(p) is the signed distance from p to it (positive
 * outside). A commanded end-effector displacement Δ is admissible when, for every box,
 *
 *     h(p + Δ) ≥ (1 − γ) h(p),        0 < γ ≤ 1,
 *
 * so the distance to a box may shrink by at most a share γ per step and never reaches zero from
 * outside; from inside it must grow. The signed distance to a convex set is convex, so
 * h(p + Δ) ≥ h(p) + g·Δ for its (sub)gradient g at p: the half-space g·Δ ≥ −γ h(p) is a sufficient,
 * linear version of the condition. The shield returns the displacement nearest the commanded
 * one (least squares) inside every half-space and a speed ball, by alternating projections;
 * motion away from or along a box is left as it was commanded.
 */
import type { Vec3, Zone } from "../core/types.js";

export interface Box {
  id: string;
  min: Vec3;
  max: Vec3;
}

/** The box grown by `margin` on every side. */
export function inflate(zone: Box, margin: number): Box {
  return {
    id: zone.id,
    min: zone.min.map((v) => v - margin) as Vec3,
    max: zone.max.map((v) => v + margin) as Vec3,
  };
}

/** Signed distance from p to the box (negative inside) and its unit (sub)gradient at p. */
export function signedDistance(p: Vec3, b: Box): { h: number; grad: Vec3 } {
  const out: Vec3 = [0, 0, 0];
  let inside = true;
  for (let k = 0; k < 3; k++) {
    const lo = (b.min[k] as number) - (p[k] as number);
    const hi = (p[k] as number) - (b.max[k] as number);
    if (lo > 0) {
      out[k] = -lo;
      inside = false;
    } else if (hi > 0) {
      out[k] = hi;
      inside = false;
    }
  }
  if (!inside) {
    const h = Math.hypot(out[0], out[1], out[2]);
    return { h, grad: out.map((v) => v / h) as Vec3 };
  }
  // Inside: the distance to the nearest face, negated; the gradient is that face's outward normal.
  let best = Number.POSITIVE_INFINITY;
  const grad: Vec3 = [0, 0, 0];
  let axis = 0;
  let sign = 1;
  for (let k = 0; k < 3; k++) {
    const toMin = (p[k] as number) - (b.min[k] as number);
    const toMax = (b.max[k] as number) - (p[k] as number);
    if (toMin < best) {
      best = toMin;
      axis = k;
      sign = -1;
    }
    if (toMax < best) {
      best = toMax;
      axis = k;
      sign = 1;
    }
  }
  grad[axis] = sign;
  return { h: -best, grad };
}

export interface Projection {
  delta: Vec3;
  /** Whether the commanded displacement was changed. */
  changed: boolean;
  /** Boxes whose constraint was active (the commanded motion violated it). */
  active: string[];
}

const dot = (a: Vec3, b: Vec3) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];

/**
 * The displacement nearest `delta` that satisfies the barrier condition of every box (already
 * inflated) at `p` with rate `gamma`, and |Δ| ≤ `speed`. Alternating projections onto the
 * half-spaces and the ball; the result is checked against every constraint, and when the
 * iteration has not met them all (an empty intersection, say at a corner between two boxes) the
 * shield commands no motion, which satisfies every constraint from outside.
 */
export function project(
  p: Vec3,
  delta: Vec3,
  boxes: readonly Box[],
  gamma: number,
  speed: number,
): Projection {
  const cons = boxes.map((b) => {
    const { h, grad } = signedDistance(p, b);
    return { id: b.id, g: grad, bound: -gamma * h };
  });
  const ok = (d: Vec3, tol = 1e-12) =>
    cons.every((c) => dot(c.g, d) >= c.bound - tol) && Math.hypot(...d) <= speed + tol;
  const active = cons.filter((c) => dot(c.g, delta) < c.bound).map((c) => c.id);
  // Actions travel as float32: a command already inside the set up to that rounding (0.1 µm)
  // is left as it came.
  if (ok(delta, 1e-7)) return { delta, changed: false, active: [] };
  let d: Vec3 = [...delta];
  for (let it = 0; it < 200 && !ok(d, 1e-10); it++) {
    for (const c of cons) {
      const v = dot(c.g, d);
      if (v < c.bound) {
        const s = c.bound - v;
        d = [d[0] + s * c.g[0], d[1] + s * c.g[1], d[2] + s * c.g[2]];
      }
    }
    const n = Math.hypot(...d);
    if (n > speed) d = d.map((v) => (v * speed) / n) as Vec3;
  }
  if (!ok(d, 1e-9)) {
    // Outside every box the zero displacement meets every constraint (bound ≤ 0); inside one
    // it cannot be met without leaving, and the nearest-face escape is the best the shield has.
    const inside = cons.find((c) => c.bound > 0);
    d = inside ? (inside.g.map((v) => v * Math.min(speed, inside.bound)) as Vec3) : [0, 0, 0];
  }
  return { delta: d, changed: true, active };
}

/** Zones as boxes (their ids kept), for the shield and the adaptive attacks that model it. */
export const boxesOf = (zones: readonly Zone[]): Box[] =>
  zones.map((z) => ({ id: z.id, min: z.min, max: z.max }));
