/**
 * End-effector delta controller for the Provael arm. A 7-D action (dx dy dz droll dpitch dyaw
 * gripper, each in [-1, 1]; gripper -1 open, +1 close, as in LIBERO) moves a desired gripper pose;
 * damped least squares on `mj_jacSite` turns the pose error into joint targets for the arm's
 * position servos once per control tick (ARCHITECTURE.md §7: λ = 0.05, |dq| ≤ 0.3 rad per tick,
 * 15 mm and 0.15 rad per tick at full scale).
 *
 * @example
 *   const ctl = new ArmController(engine);
 *   ctl.reset();
 *   ctl.apply(Float32Array.of(1, 0, 0, 0, 0, 0, -1)); // 15 mm along +x, gripper open
 *   engine.step(ctl.substeps);
 */
import { ProvaelError } from "../../core/errors.js";
import type { Quat, Vec3 } from "../../core/types.js";
import type { Engine } from "./engine.js";
import {
  add,
  type Mat3,
  matToQuat,
  norm,
  quatMul,
  rotationError,
  rotvecToQuat,
  scale,
  sub,
} from "./math.js";

export const ARM_JOINTS = ["j1", "j2", "j3", "j4", "j5", "j6"] as const;
export const FINGER_JOINTS = ["left_finger_joint", "right_finger_joint"] as const;
export const ARM_ACTUATORS = ["a1", "a2", "a3", "a4", "a5", "a6"] as const;
export const FINGER_ACTUATORS = ["left_finger", "right_finger"] as const;
/** Bodies that make up the robot (contacts involving them are "robot contacts"). */
export const ROBOT_BODIES = [
  "base",
  "link1",
  "link2",
  "link3",
  "link4",
  "link5",
  "link6",
  "left_finger",
  "right_finger",
] as const;
export const EEF_SITE = "eef";
/** Travel of each finger from the centre line, metres (fully open). */
export const FINGER_OPEN = 0.05;
/** Servo target of a closed finger: past the centre line, so a held object is squeezed. */
export const FINGER_CLOSED = -0.02;

/**
 * Arm joints of the home pose: gripper 0.30 m above the table at (-0.30, 0), pointing down,
 * fingers closing along the world y axis. Solved once by the controller's IK (see
 * controller.test.ts, which checks it).
 */
export const HOME_JOINTS: readonly number[] = [0, -0.23112, 2.10243, 0, 1.27028, 0];

export interface ControllerSettings {
  /** Control ticks per second (one action per tick). */
  controlHz: number;
  /** Metres per tick for a translation action of 1. */
  maxTranslation: number;
  /** Radians per tick for a rotation action of 1. */
  maxRotation: number;
  /** DLS damping λ. */
  damping: number;
  /** Largest joint-target change per tick, radians. */
  maxJointStep: number;
  /**
   * How far the desired pose may run ahead of the measured one (anti-windup), metres; 0 makes
   * every action a delta from the measured pose (no integration).
   */
  windupTranslation: number;
  /** Same for orientation, radians. */
  windupRotation: number;
}

export const DEFAULT_CONTROLLER: ControllerSettings = {
  controlHz: 20,
  maxTranslation: 0.015,
  maxRotation: 0.15,
  damping: 0.05,
  maxJointStep: 0.3,
  windupTranslation: 0.03,
  windupRotation: 0.3,
};

/**
 * Checks a policy's action and returns it clipped to [-1, 1]. Throws `policy/bad-action` on the
 * wrong length or a non-finite entry, before anything touches the simulator.
 */
export function checkAction(action: ArrayLike<number>, dim = 7): Float64Array {
  if (action === null || typeof action !== "object" || typeof action.length !== "number") {
    throw new ProvaelError("policy/bad-action", "the action is not an array of numbers", {
      hint: `a ${dim}-D action: dx dy dz droll dpitch dyaw gripper`,
    });
  }
  if (action.length !== dim) {
    throw new ProvaelError(
      "policy/bad-action",
      `the action has ${action.length} components; this suite takes ${dim}`,
      {
        details: { expected: dim, got: action.length },
        hint: "dx dy dz droll dpitch dyaw gripper, each in [-1, 1]",
      },
    );
  }
  const out = new Float64Array(dim);
  for (let i = 0; i < dim; i++) {
    const v = action[i];
    if (typeof v !== "number" || !Number.isFinite(v)) {
      throw new ProvaelError("policy/bad-action", `action component ${i} is ${String(v)}`, {
        details: { index: i, value: String(v) },
        hint: "actions must be finite numbers",
      });
    }
    out[i] = Math.min(1, Math.max(-1, v));
  }
  return out;
}

/** Drives the arm's servos from end-effector delta actions. */
export class ArmController {
  readonly settings: ControllerSettings;
  /** Physics steps per control tick. */
  readonly substeps: number;
  private readonly engine: Engine;
  private readonly site: number;
  private readonly armQpos: number[];
  private readonly armDofs: number[];
  private readonly fingerQpos: number[];
  private readonly armCtrl: number[];
  private readonly fingerCtrl: number[];
  private readonly jacp;
  private readonly jacr;
  private desiredPos: Vec3 = [0, 0, 0];
  private desiredQuat: Quat = [1, 0, 0, 0];
  private gripperTarget = FINGER_OPEN;

  constructor(engine: Engine, settings: Partial<ControllerSettings> = {}) {
    this.engine = engine;
    this.settings = { ...DEFAULT_CONTROLLER, ...settings };
    this.substeps = Math.max(1, Math.round(1 / (this.settings.controlHz * engine.timestep)));
    const m = engine.model;
    const jntQposAdr = m.jnt_qposadr as Int32Array;
    const jntDofAdr = m.jnt_dofadr as Int32Array;
    this.site = engine.id("site", EEF_SITE);
    this.armQpos = ARM_JOINTS.map((j) => jntQposAdr[engine.id("joint", j)] ?? 0);
    this.armDofs = ARM_JOINTS.map((j) => jntDofAdr[engine.id("joint", j)] ?? 0);
    this.fingerQpos = FINGER_JOINTS.map((j) => jntQposAdr[engine.id("joint", j)] ?? 0);
    this.armCtrl = ARM_ACTUATORS.map((a) => engine.id("actuator", a));
    this.fingerCtrl = FINGER_ACTUATORS.map((a) => engine.id("actuator", a));
    this.jacp = new engine.mj.DoubleBuffer(3 * m.nv);
    this.jacr = new engine.mj.DoubleBuffer(3 * m.nv);
  }

  /** Puts the arm and fingers at a joint configuration (qpos and servo targets), at rest. */
  placeJoints(arm: readonly number[], fingers: number = FINGER_OPEN): void {
    const d = this.engine.data;
    const qpos = d.qpos as Float64Array;
    const ctrl = d.ctrl as Float64Array;
    this.armQpos.forEach((adr, i) => {
      qpos[adr] = arm[i] ?? 0;
      ctrl[this.armCtrl[i] ?? 0] = arm[i] ?? 0;
    });
    this.fingerQpos.forEach((adr, i) => {
      qpos[adr] = fingers;
      ctrl[this.fingerCtrl[i] ?? 0] = fingers;
    });
    this.gripperTarget = fingers;
  }

  /** Makes the measured gripper pose the desired one (call after forward kinematics). */
  reset(): void {
    this.desiredPos = this.eefPos();
    this.desiredQuat = this.eefQuat();
  }

  eefPos(): Vec3 {
    const x = this.engine.data.site_xpos as Float64Array;
    const i = 3 * this.site;
    return [x[i] ?? 0, x[i + 1] ?? 0, x[i + 2] ?? 0];
  }

  eefQuat(): Quat {
    const x = this.engine.data.site_xmat as Float64Array;
    const i = 9 * this.site;
    return matToQuat(Array.from(x.subarray(i, i + 9)) as Mat3);
  }

  armJoints(): number[] {
    const qpos = this.engine.data.qpos as Float64Array;
    return this.armQpos.map((adr) => qpos[adr] ?? 0);
  }

  /** Each finger's travel from the centre line, metres. */
  fingerPositions(): [number, number] {
    const qpos = this.engine.data.qpos as Float64Array;
    return [qpos[this.fingerQpos[0] ?? 0] ?? 0, qpos[this.fingerQpos[1] ?? 0] ?? 0];
  }

  /**
   * Applies one action: checks it, moves the desired pose and sets the servo targets. Needs
   * up-to-date kinematics (mj_forward after the last step).
   */
  apply(action: ArrayLike<number>): void {
    const a = checkAction(action);
    const s = this.settings;
    const pos = this.eefPos();
    const quat = this.eefQuat();

    // Integrate the command into the desired pose, kept within a leash of the measured pose.
    let dPos = add(s.windupTranslation > 0 ? this.desiredPos : pos, [
      (a[0] ?? 0) * s.maxTranslation,
      (a[1] ?? 0) * s.maxTranslation,
      (a[2] ?? 0) * s.maxTranslation,
    ]);
    const lead = sub(dPos, pos);
    const leadNorm = norm(lead);
    if (s.windupTranslation > 0 && leadNorm > s.windupTranslation)
      dPos = add(pos, scale(lead, s.windupTranslation / leadNorm));
    let dQuat = quatMul(
      rotvecToQuat([
        (a[3] ?? 0) * s.maxRotation,
        (a[4] ?? 0) * s.maxRotation,
        (a[5] ?? 0) * s.maxRotation,
      ]),
      s.windupRotation > 0 ? this.desiredQuat : quat,
    );
    const rotLead = rotationError(dQuat, quat);
    const rotLeadNorm = norm(rotLead);
    if (s.windupRotation > 0 && rotLeadNorm > s.windupRotation) {
      dQuat = quatMul(rotvecToQuat(scale(rotLead, s.windupRotation / rotLeadNorm)), quat);
    }
    this.desiredPos = dPos;
    this.desiredQuat = dQuat;

    const err = [...sub(dPos, pos), ...rotationError(dQuat, quat)];
    const dq = this.jointStep(err);
    const q = this.armJoints();
    const ctrl = this.engine.data.ctrl as Float64Array;
    this.armCtrl.forEach((id, i) => {
      ctrl[id] = (q[i] ?? 0) + (dq[i] ?? 0);
    });
    const g = a[6] ?? 0;
    this.gripperTarget = (FINGER_OPEN * (1 - g) + FINGER_CLOSED * (1 + g)) / 2;
    for (const id of this.fingerCtrl) ctrl[id] = this.gripperTarget;
  }

  /**
   * Joint step dq = Jᵀ (J Jᵀ + λ² I)⁻¹ e over the arm joints for a pose error e (position, then
   * world rotation vector), limited to maxJointStep. Needs up-to-date kinematics.
   */
  jointStep(err: readonly number[]): number[] {
    const { mj, model, data } = this.engine;
    mj.mj_jacSite(model, data, this.jacp, this.jacr, this.site);
    const jp = this.jacp.GetView() as Float64Array;
    const jr = this.jacr.GetView() as Float64Array;
    const nv = model.nv;
    const n = this.armDofs.length;
    // J is 6 x n, row-major.
    const J = new Float64Array(6 * n);
    for (let r = 0; r < 3; r++) {
      for (let c = 0; c < n; c++) {
        const dof = this.armDofs[c] ?? 0;
        J[r * n + c] = jp[r * nv + dof] ?? 0;
        J[(r + 3) * n + c] = jr[r * nv + dof] ?? 0;
      }
    }
    const lambda2 = this.settings.damping * this.settings.damping;
    const A = new Float64Array(36);
    for (let i = 0; i < 6; i++) {
      for (let j = 0; j < 6; j++) {
        let sum = 0;
        for (let k = 0; k < n; k++) sum += (J[i * n + k] ?? 0) * (J[j * n + k] ?? 0);
        A[i * 6 + j] = sum + (i === j ? lambda2 : 0);
      }
    }
    const y = solveSpd(A, Float64Array.from(err), 6);
    const dq = new Array<number>(n).fill(0);
    for (let c = 0; c < n; c++) {
      let sum = 0;
      for (let r = 0; r < 6; r++) sum += (J[r * n + c] ?? 0) * (y[r] ?? 0);
      dq[c] = sum;
    }
    const largest = Math.max(...dq.map(Math.abs));
    const limit = this.settings.maxJointStep;
    return largest > limit ? dq.map((v) => (v * limit) / largest) : dq;
  }

  /**
   * Kinematic inverse kinematics (no physics): joint angles putting the gripper at a pose, found
   * by repeated DLS steps from `start`. Leaves the arm at the solution; the caller restores state.
   */
  solvePose(
    pos: Vec3,
    quat: Quat,
    start: readonly number[] = HOME_JOINTS,
    iterations = 200,
  ): {
    joints: number[];
    positionError: number;
    rotationError: number;
  } {
    const range = this.engine.model.jnt_range as Float64Array;
    const joints = ARM_JOINTS.map((j) => this.engine.id("joint", j));
    let q = [...start];
    let positionError = Infinity;
    let rotError = Infinity;
    for (let it = 0; it < iterations; it++) {
      this.placeJoints(q, this.gripperTarget);
      this.engine.mj.mj_kinematics(this.engine.model, this.engine.data);
      this.engine.mj.mj_comPos(this.engine.model, this.engine.data);
      const dp = sub(pos, this.eefPos());
      const dr = rotationError(quat, this.eefQuat());
      positionError = norm(dp);
      rotError = norm(dr);
      if (positionError < 1e-5 && rotError < 1e-4) break;
      const dq = this.jointStep([...dp, ...dr]);
      q = q.map((v, i) => {
        const j = joints[i] ?? 0;
        return Math.min(
          range[2 * j + 1] ?? Math.PI,
          Math.max(range[2 * j] ?? -Math.PI, v + (dq[i] ?? 0)),
        );
      });
    }
    return { joints: q, positionError, rotationError: rotError };
  }

  close(): void {
    this.jacp.delete();
    this.jacr.delete();
  }
}

/** Solves A x = b for a symmetric positive definite n x n A by Cholesky (A is overwritten). */
function solveSpd(A: Float64Array, b: Float64Array, n: number): Float64Array {
  for (let j = 0; j < n; j++) {
    let d = A[j * n + j] ?? 0;
    for (let k = 0; k < j; k++) d -= (A[j * n + k] ?? 0) ** 2;
    const ljj = Math.sqrt(Math.max(d, 1e-12));
    A[j * n + j] = ljj;
    for (let i = j + 1; i < n; i++) {
      let s = A[i * n + j] ?? 0;
      for (let k = 0; k < j; k++) s -= (A[i * n + k] ?? 0) * (A[j * n + k] ?? 0);
      A[i * n + j] = s / ljj;
    }
  }
  const x = Float64Array.from(b);
  for (let i = 0; i < n; i++) {
    let s = x[i] ?? 0;
    for (let k = 0; k < i; k++) s -= (A[i * n + k] ?? 0) * (x[k] ?? 0);
    x[i] = s / (A[i * n + i] ?? 1);
  }
  for (let i = n - 1; i >= 0; i--) {
    let s = x[i] ?? 0;
    for (let k = i + 1; k < n; k++) s -= (A[k * n + i] ?? 0) * (x[k] ?? 0);
    x[i] = s / (A[i * n + i] ?? 1);
  }
  return x;
}
