/**
 * Small 3-D helpers for the MuJoCo suites and the scripted expert. Quaternions are w, x, y, z
 * (MuJoCo order); matrices are 3x3 row-major, as MuJoCo stores `xmat`.
 */
import type { Quat, Vec3 } from "../../core/types.js";

export type Mat3 = [number, number, number, number, number, number, number, number, number];

export function add(a: Vec3, b: Vec3): Vec3 {
  return [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
}

export function sub(a: Vec3, b: Vec3): Vec3 {
  return [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
}

export function scale(a: Vec3, s: number): Vec3 {
  return [a[0] * s, a[1] * s, a[2] * s];
}

export function norm(a: Vec3): number {
  return Math.hypot(a[0], a[1], a[2]);
}

export function cross(a: Vec3, b: Vec3): Vec3 {
  return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
}

/** Matrix from a unit quaternion. */
export function quatToMat(q: Quat): Mat3 {
  const [w, x, y, z] = q;
  return [
    1 - 2 * (y * y + z * z),
    2 * (x * y - w * z),
    2 * (x * z + w * y),
    2 * (x * y + w * z),
    1 - 2 * (x * x + z * z),
    2 * (y * z - w * x),
    2 * (x * z - w * y),
    2 * (y * z + w * x),
    1 - 2 * (x * x + y * y),
  ];
}

/** Unit quaternion (w >= 0) from a rotation matrix (Shepperd's method). */
export function matToQuat(m: Mat3): Quat {
  const [m00, m01, m02, m10, m11, m12, m20, m21, m22] = m;
  const tr = m00 + m11 + m22;
  let q: Quat;
  if (tr > 0) {
    const s = Math.sqrt(tr + 1) * 2;
    q = [0.25 * s, (m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s];
  } else if (m00 > m11 && m00 > m22) {
    const s = Math.sqrt(1 + m00 - m11 - m22) * 2;
    q = [(m21 - m12) / s, 0.25 * s, (m01 + m10) / s, (m02 + m20) / s];
  } else if (m11 > m22) {
    const s = Math.sqrt(1 + m11 - m00 - m22) * 2;
    q = [(m02 - m20) / s, (m01 + m10) / s, 0.25 * s, (m12 + m21) / s];
  } else {
    const s = Math.sqrt(1 + m22 - m00 - m11) * 2;
    q = [(m10 - m01) / s, (m02 + m20) / s, (m12 + m21) / s, 0.25 * s];
  }
  return normalizeQuat(q[0] < 0 ? [-q[0], -q[1], -q[2], -q[3]] : q);
}

export function normalizeQuat(q: Quat): Quat {
  const n = Math.hypot(q[0], q[1], q[2], q[3]) || 1;
  return [q[0] / n, q[1] / n, q[2] / n, q[3] / n];
}

export function quatMul(a: Quat, b: Quat): Quat {
  return [
    a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
    a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
    a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
    a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
  ];
}

export function quatConj(q: Quat): Quat {
  return [q[0], -q[1], -q[2], -q[3]];
}

/** Quaternion of a rotation vector (axis times angle, radians). */
export function rotvecToQuat(v: Vec3): Quat {
  const angle = norm(v);
  if (angle < 1e-12) return [1, 0, 0, 0];
  const s = Math.sin(angle / 2) / angle;
  return [Math.cos(angle / 2), v[0] * s, v[1] * s, v[2] * s];
}

/** Rotation vector (axis-angle, angle in [0, pi]) of a quaternion. */
export function quatToRotvec(q: Quat): Vec3 {
  const [w0, x0, y0, z0] = normalizeQuat(q);
  // The shorter of the two equivalent rotations.
  const sign = w0 < 0 ? -1 : 1;
  const w = w0 * sign;
  const v: Vec3 = [x0 * sign, y0 * sign, z0 * sign];
  const s = norm(v);
  if (s < 1e-12) return [0, 0, 0];
  const angle = 2 * Math.atan2(s, w);
  return scale(v, angle / s);
}

/** World-frame rotation vector taking orientation `from` to orientation `to`. */
export function rotationError(to: Quat, from: Quat): Vec3 {
  return quatToRotvec(quatMul(to, quatConj(from)));
}

export function rotate(q: Quat, v: Vec3): Vec3 {
  const m = quatToMat(q);
  return [
    m[0] * v[0] + m[1] * v[1] + m[2] * v[2],
    m[3] * v[0] + m[4] * v[1] + m[5] * v[2],
    m[6] * v[0] + m[7] * v[1] + m[8] * v[2],
  ];
}

/** Quaternion of a rotation by `angle` about the world z axis. */
export function yawQuat(angle: number): Quat {
  return [Math.cos(angle / 2), 0, 0, Math.sin(angle / 2)];
}

/** Heading of a body's x axis in the world xy plane. */
export function yawOf(q: Quat): number {
  const m = quatToMat(q);
  return Math.atan2(m[3], m[0]);
}

/** Angle wrapped to (-pi, pi]. */
export function wrapAngle(a: number): number {
  let x = a % (2 * Math.PI);
  if (x > Math.PI) x -= 2 * Math.PI;
  if (x <= -Math.PI) x += 2 * Math.PI;
  return x;
}
