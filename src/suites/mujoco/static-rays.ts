/**
 * Ray hits on the geoms that never move, kept between frames of a camera that did not move.
 *
 * `mj_multiRay` tests every ray against every visible geom and keeps the nearest hit, the lower
 * geom id on a tie. Each geom's distance along a ray depends on that geom alone (its pose, size,
 * bounding volume, visibility and the ray), so the hits over two disjoint sets of geoms, merged
 * by the same rule, are exactly the hit over their union. A fixed camera sees the table, walls and
 * floor along the same rays frame after frame: their hits are cast once, and each later frame
 * casts only the moving geoms (the arm, the objects) and merges. The images are bit-identical to
 * one full cast; only the time differs.
 *
 * Whether a stored hit still holds is checked, not assumed: the static geoms' state (pose, size,
 * bounding volumes, visibility) is compared with the state the hits were cast in, and each ray's
 * origin and direction with the stored ones, bit for bit.
 */
import type { MjData, MjModel } from "mujoco-js";

/** The geoms of bodies welded to the world (not mocap), and the others. */
export function splitStaticGeoms(model: MjModel): { fixed: number[]; moving: number[] } {
  const weld = model.body_weldid as Int32Array;
  const mocap = model.body_mocapid as Int32Array;
  const bodyOf = model.geom_bodyid as Int32Array;
  const fixed: number[] = [];
  const moving: number[] = [];
  for (let g = 0; g < model.ngeom; g++) {
    const b = bodyOf[g]!;
    if (weld[b] === 0 && mocap[b]! < 0) fixed.push(g);
    else moving.push(g);
  }
  return { fixed, moving };
}

/** Values per static geom and per static body in a state snapshot. */
const PER_GEOM = 26;
const PER_BODY = 10;

/** MuJoCo's visibility rule for rays: a geom is seen unless its alpha (or its material's) is 0. */
export function rayVisible(
  g: number,
  matid: Int32Array,
  matRgba: Float32Array,
  rgba: Float32Array,
): boolean {
  const mat = matid[g] as number;
  return mat >= 0 ? matRgba[4 * mat + 3] !== 0 : rgba[4 * g + 3] !== 0;
}

/**
 * Everything a static geom's ray distance depends on besides the ray, as MuJoCo's ray code reads
 * it: visibility (alpha of the geom, or of its material), type, mesh/hfield id, size, bounding box
 * and sphere, world pose; per body: its bounding-volume box and inertial-frame position.
 */
export function staticState(
  model: MjModel,
  data: MjData,
  geoms: readonly number[],
  bodies: readonly number[],
  out: Float64Array,
): void {
  const rgba = model.geom_rgba as Float32Array;
  const matid = model.geom_matid as Int32Array;
  const matRgba = model.mat_rgba as Float32Array;
  const type = model.geom_type as Int32Array;
  const dataid = model.geom_dataid as Int32Array;
  const size = model.geom_size as Float64Array;
  const aabb = model.geom_aabb as Float64Array;
  const rbound = model.geom_rbound as Float64Array;
  const xpos = data.geom_xpos as Float64Array;
  const xmat = data.geom_xmat as Float64Array;
  let o = 0;
  for (const g of geoms) {
    const mat = matid[g]!;
    out[o++] = rayVisible(g, matid, matRgba, rgba) ? 1 : 0;
    out[o++] = mat;
    out[o++] = type[g]!;
    out[o++] = dataid[g]!;
    for (let c = 0; c < 3; c++) out[o++] = size[3 * g + c]!;
    for (let c = 0; c < 6; c++) out[o++] = aabb[6 * g + c]!;
    out[o++] = rbound[g]!;
    for (let c = 0; c < 3; c++) out[o++] = xpos[3 * g + c]!;
    for (let c = 0; c < 9; c++) out[o++] = xmat[9 * g + c]!;
  }
  const bvhadr = model.body_bvhadr as Int32Array;
  const bvh = model.bvh_aabb as Float64Array;
  const xipos = data.xipos as Float64Array;
  for (const b of bodies) {
    const adr = bvhadr[b]!;
    out[o++] = adr;
    for (let c = 0; c < 6; c++) out[o++] = adr >= 0 ? bvh[6 * adr + c]! : 0;
    for (let c = 0; c < 3; c++) out[o++] = xipos[3 * b + c]!;
  }
}

/** The number of values {@link staticState} writes. */
export function staticStateLength(geoms: number, bodies: number): number {
  return geoms * PER_GEOM + bodies * PER_BODY;
}

/** Per-pixel nearest hits on the static geoms for one kind of ray pass (primary, overlay, shadow). */
export class StaticHits {
  /** The static state the stored hits were cast in (NaN: nothing stored yet). */
  readonly state: Float64Array;
  private readonly scratch: Float64Array;
  readonly origin = new Float64Array(3).fill(Number.NaN);
  readonly dirs: Float64Array;
  readonly valid: Uint8Array;
  readonly geom: Int32Array;
  readonly dist: Float64Array;

  constructor(pixels: number, stateLength: number) {
    this.state = new Float64Array(stateLength).fill(Number.NaN);
    this.scratch = new Float64Array(stateLength);
    this.dirs = new Float64Array(3 * pixels);
    this.valid = new Uint8Array(pixels);
    this.geom = new Int32Array(pixels);
    this.dist = new Float64Array(pixels);
  }

  /** Forgets every stored hit unless `state` (filled by the caller) and `origin` match. */
  begin(fill: (out: Float64Array) => void, origin: Float64Array): void {
    fill(this.scratch);
    if (sameBits(this.scratch, this.state) && sameBits(origin, this.origin)) return;
    this.state.set(this.scratch);
    this.origin.set(origin);
    this.valid.fill(0);
  }

  /** Whether pixel `p` holds a hit for exactly the direction `vec[3k..3k+2]`. */
  holds(p: number, vec: Float64Array, k: number): boolean {
    if (this.valid[p] === 0) return false;
    const d = this.dirs;
    return (
      Object.is(d[3 * p], vec[3 * k]) &&
      Object.is(d[3 * p + 1], vec[3 * k + 1]) &&
      Object.is(d[3 * p + 2], vec[3 * k + 2])
    );
  }

  store(p: number, vec: Float64Array, k: number, geom: number, dist: number): void {
    this.dirs[3 * p] = vec[3 * k]!;
    this.dirs[3 * p + 1] = vec[3 * k + 1]!;
    this.dirs[3 * p + 2] = vec[3 * k + 2]!;
    this.geom[p] = geom;
    this.dist[p] = dist;
    this.valid[p] = 1;
  }
}

/**
 * MuJoCo's rule for the nearer of two hits (geom -1: none): the smaller distance, the lower geom
 * id on a tie, as a scan in geom order that replaces only on a strictly smaller distance keeps.
 */
export function staticWins(sGeom: number, sDist: number, dGeom: number, dDist: number): boolean {
  if (sGeom < 0) return false;
  if (dGeom < 0) return true;
  return sDist < dDist || (sDist === dDist && sGeom < dGeom);
}

function sameBits(a: Float64Array, b: Float64Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}
