/**
 * Which rays of a batch from one origin may pass through any of a few oriented boxes: a
 * conservative test (it may keep rays that miss, never drops one that hits) in a few operations
 * per ray.
 *
 * Every ray direction v is mapped to the point (v·e1, v·e2) / (v·a) of the plane at unit
 * distance along the batch's mean direction a (e1, e2 complete an orthonormal basis). A point q
 * maps to the point of the ray through it, so the rays that meet a box (a convex hull of its
 * eight corners, all in front of the origin's plane) map into the hull of the corners' images,
 * hence into the bounding rectangle of those images. The rectangles are stamped onto a grid over
 * the rays' plane points and a ray is kept when its cell is stamped: a ray that meets a box lies
 * in that box's rectangle, hence in a stamped cell, as the cell index is a monotone function of
 * the coordinate. Rays nearly perpendicular to a are always kept; a box wholly behind the
 * origin's plane is out of reach of the others, and one across that plane keeps every ray.
 */
const GRID = 64;
/** Numbers per box: centre (3), then three axes scaled by the half extents (3 × 3). */
export const BOX = 12;
/** Rays at more than about 84° from the mean direction are always kept. */
const MIN_COS = 0.1;

export class NearRays {
  private readonly u: Float64Array;
  private readonly w: Float64Array;
  private readonly grid = new Uint8Array(GRID * GRID);
  private readonly gridId = new Int32Array(GRID * GRID);

  constructor(maxRays: number) {
    this.u = new Float64Array(maxRays);
    this.w = new Float64Array(maxRays);
  }

  /**
   * Sets `keep[k]` to 1 for each ray k that may pass through a box, 0 otherwise; returns how
   * many were kept. `boxes` holds {@link BOX} numbers per box: its centre, then its three axes
   * scaled by the half extents; `vec` holds `count` directions.
   */
  mark(
    origin: Float64Array,
    vec: Float64Array,
    count: number,
    boxes: Float64Array,
    boxCount: number,
    keep: Uint8Array,
  ): number {
    return this.markExcept(origin, vec, count, boxes, null, boxCount, null, keep);
  }

  /**
   * As {@link NearRays.mark}, except that box j (id `ids[j]`) does not keep ray k when
   * `own[k]` is that id: a ray may meet its own box (a shadow ray ends on that geom's surface).
   * A cell stamped by two or more boxes keeps every ray in it.
   */
  markExcept(
    origin: Float64Array,
    vec: Float64Array,
    count: number,
    boxes: Float64Array,
    ids: Int32Array | null,
    boxCount: number,
    own: Int32Array | null,
    keep: Uint8Array,
  ): number {
    if (boxCount === 0) {
      keep.fill(0, 0, count);
      return 0;
    }
    // The batch's mean direction and a basis around it.
    let ax = 0;
    let ay = 0;
    let az = 0;
    for (let k = 0; k < count; k++) {
      ax += vec[3 * k]!;
      ay += vec[3 * k + 1]!;
      az += vec[3 * k + 2]!;
    }
    const al = Math.hypot(ax, ay, az);
    if (!(al > 0)) return keepAll(keep, count);
    ax /= al;
    ay /= al;
    az /= al;
    // e1: a unit vector orthogonal to a, from the world axis least aligned with it.
    let e1x: number;
    let e1y: number;
    let e1z: number;
    if (Math.abs(ax) <= Math.abs(ay) && Math.abs(ax) <= Math.abs(az)) {
      e1x = 0;
      e1y = az;
      e1z = -ay;
    } else if (Math.abs(ay) <= Math.abs(az)) {
      e1x = -az;
      e1y = 0;
      e1z = ax;
    } else {
      e1x = ay;
      e1y = -ax;
      e1z = 0;
    }
    const el = Math.hypot(e1x, e1y, e1z);
    e1x /= el;
    e1y /= el;
    e1z /= el;
    const e2x = ay * e1z - az * e1y;
    const e2y = az * e1x - ax * e1z;
    const e2z = ax * e1y - ay * e1x;

    // Plane points of the rays; rays far off the mean direction are kept outright.
    const { u, w, grid, gridId } = this;
    let u0 = Infinity;
    let u1 = -Infinity;
    let w0 = Infinity;
    let w1 = -Infinity;
    for (let k = 0; k < count; k++) {
      const vx = vec[3 * k]!;
      const vy = vec[3 * k + 1]!;
      const vz = vec[3 * k + 2]!;
      const len = Math.sqrt(vx * vx + vy * vy + vz * vz);
      const d = vx * ax + vy * ay + vz * az;
      if (!(d > MIN_COS * len)) {
        u[k] = Number.NaN;
        continue;
      }
      const uk = (vx * e1x + vy * e1y + vz * e1z) / d;
      const wk = (vx * e2x + vy * e2y + vz * e2z) / d;
      u[k] = uk;
      w[k] = wk;
      if (uk < u0) u0 = uk;
      if (uk > u1) u1 = uk;
      if (wk < w0) w0 = wk;
      if (wk > w1) w1 = wk;
    }
    const du = (u1 - u0) / GRID || 1;
    const dw = (w1 - w0) / GRID || 1;
    const cell = (x: number, lo: number, step: number) =>
      Math.min(GRID - 1, Math.max(0, Math.floor((x - lo) / step)));

    // Per cell: how many boxes stamped it (2 meaning two or more) and the id of the first.
    grid.fill(0);
    const ox = origin[0]!;
    const oy = origin[1]!;
    const oz = origin[2]!;
    for (let j = 0; j < boxCount; j++) {
      const o = BOX * j;
      let bu0 = Infinity;
      let bu1 = -Infinity;
      let bw0 = Infinity;
      let bw1 = -Infinity;
      let behind = 0;
      for (let v = 0; v < 8; v++) {
        // Corner v: centre ± each scaled axis.
        let px = boxes[o]! - ox;
        let py = boxes[o + 1]! - oy;
        let pz = boxes[o + 2]! - oz;
        for (let c = 0; c < 3; c++) {
          const s = v & (1 << c) ? 1 : -1;
          px += s * boxes[o + 3 + 3 * c]!;
          py += s * boxes[o + 4 + 3 * c]!;
          pz += s * boxes[o + 5 + 3 * c]!;
        }
        const z = px * ax + py * ay + pz * az;
        if (!(z > 0)) {
          behind++;
          continue;
        }
        const cu = (px * e1x + py * e1y + pz * e1z) / z;
        const cw = (px * e2x + py * e2y + pz * e2z) / z;
        if (cu < bu0) bu0 = cu;
        if (cu > bu1) bu1 = cu;
        if (cw < bw0) bw0 = cw;
        if (cw > bw1) bw1 = cw;
      }
      // Wholly behind the origin's plane: no mapped ray (v·a > 0) reaches it. Reaching across
      // that plane: rays in any direction may meet it.
      if (behind === 8) continue;
      if (behind > 0) return keepAll(keep, count);
      if (bu1 < u0 || bu0 > u1 || bw1 < w0 || bw0 > w1) continue;
      const id = ids ? ids[j]! : -1;
      const i0 = cell(bu0, u0, du);
      const i1 = cell(bu1, u0, du);
      const k0 = cell(bw0, w0, dw);
      const k1 = cell(bw1, w0, dw);
      for (let i = i0; i <= i1; i++) {
        for (let k = k0; k <= k1; k++) {
          const c = i * GRID + k;
          if (grid[c] === 0) {
            grid[c] = 1;
            gridId[c] = id;
          } else if (gridId[c] !== id || id < 0) grid[c] = 2;
        }
      }
    }

    let kept = 0;
    for (let k = 0; k < count; k++) {
      const uk = u[k]!;
      let hit = true;
      if (!Number.isNaN(uk)) {
        const c = cell(uk, u0, du) * GRID + cell(w[k]!, w0, dw);
        const stamped = grid[c]!;
        hit = stamped === 2 || (stamped === 1 && (own === null || gridId[c] !== own[k]));
      }
      keep[k] = hit ? 1 : 0;
      if (hit) kept++;
    }
    return kept;
  }
}

function keepAll(keep: Uint8Array, count: number): number {
  keep.fill(1, 0, count);
  return count;
}
