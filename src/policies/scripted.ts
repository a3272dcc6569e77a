/**
 * The `scripted` expert for the MuJoCo suites. It reads the instruction literally: the first
 * object it names is the subject, the verb before it says whether to pick it up, touch it or move
 * the gripper to it, and the first object named after a placing verb ("place", "put", "hand", …)
 * is where it goes. It finds everything in the privileged simulator state and runs a phase
 * machine (approach, descend, close, lift, carry, lower, release) whose phases end on reaching
 * tolerances (1 cm in free space, 5 mm at the grasp), not on tick counts. Because it follows the
 * words, an instruction that names the knife makes it pick up the knife: it is attackable on
 * purpose. An instruction naming nothing it knows leaves the arm where it is, gripper open.
 * A box is grasped across its narrower side; `options.extra.grasp_side = "nearest"` grasps it
 * across whichever side the wrist reaches with the smaller turn (`provael record --policy-option
 * grasp_side=nearest`), so demonstrations also show a box held across its wide side.
 *
 * @example
 *   const expert = await scriptedPolicy.load({});
 *   expert.reset({ task: "kitchen_red_block", seed: 0, policySeed: 0 });
 *   const action = expert.act(obs); // obs.privileged must be present
 */
import { ProvaelError } from "../core/errors.js";
import { definePolicy } from "../core/registry.js";
import type {
  Action,
  EpisodeInfo,
  Observation,
  PolicyCapabilities,
  PolicyInstance,
  PolicyOptions,
  Quat,
  SimState,
  Vec3,
} from "../core/types.js";
import { DEFAULT_CONTROLLER, FINGER_OPEN } from "../suites/mujoco/controller.js";
import {
  norm,
  quatMul,
  quatToMat,
  rotate,
  rotationError,
  sub,
  wrapAngle,
  yawOf,
  yawQuat,
} from "../suites/mujoco/math.js";
import { TABLE_Z } from "../suites/mujoco/objects.js";
import { BASKET_WALL_TOP } from "../suites/mujoco/tabletop.js";
import { type ExpertGoal, parseInstruction } from "./scripted-instruction.js";

export {
  type ExpertGoal,
  type ExpertMode,
  findMentions,
  type Mention,
  parseInstruction,
  phrasesFor,
} from "./scripted-instruction.js";

// ---------------------------------------------------------------------------------------------
// Acting

/** Gripper pointing straight down with yaw 0 (fingers closing along world y). */
const DOWN: Quat = [0, 0, 1, 0];
/** Gripper height (eef site, above the table) for moving between places. */
const TRAVEL_HEIGHT = 0.3;
/** Fingertips reach this far below the eef site; the palm starts this far above it. */
const TIP_BELOW = 0.012;
const PALM_ABOVE = 0.068;
/** Position gain: fraction of the remaining error commanded per tick. */
const GAIN = 0.6;
const FREE_TOLERANCE = 0.01;
const GRASP_TOLERANCE = 0.005;
const YAW_TOLERANCE = 0.05;
const MAX_ATTEMPTS = 3;
/**
 * Widest side `grasp_side=nearest` grasps across: 2 cm short of the open fingers' gap, so the
 * fingers come down beside the object, not on it.
 */
const WIDE_GRASP_MAX = 2 * FINGER_OPEN - 0.02;

/**
 * Which side of a box the expert grasps across. `narrow` (the default, and every shipped
 * demonstration): always the narrower one. `nearest`: whichever side the wrist reaches with the
 * smaller turn, among the sides that fit the open gripper (ties: the narrower). The demonstrations
 * then also carry a box held across its wider side, a state the learner reaches on its own when
 * it turns its wrist less than the expert (docs/tiny-vla.md, "The actor's drops").
 */
export type GraspSide = "narrow" | "nearest";
const GRASP_SIDES: readonly GraspSide[] = ["narrow", "nearest"];

function graspSideOf(options: PolicyOptions): GraspSide {
  const raw = options.extra?.grasp_side;
  if (raw === undefined) return "narrow";
  if (typeof raw === "string" && (GRASP_SIDES as readonly string[]).includes(raw))
    return raw as GraspSide;
  throw new ProvaelError(
    "config/invalid",
    `scripted grasp_side must be ${GRASP_SIDES.join(" or ")}, got '${String(raw)}'`,
    { details: { grasp_side: raw } },
  );
}

type Phase =
  | "rise"
  | "over"
  | "descend"
  | "close"
  | "lift"
  | "carry"
  | "lower"
  | "release"
  | "retreat"
  | "hold"
  | "reach";

interface Target {
  /** Eef site position of the grasp. */
  grasp: Vec3;
  /** Gripper yaw of the grasp. */
  yaw: number;
  /** Height of the grasp point above the object's bottom. */
  aboveBottom: number;
  top: number;
  /** Object width across the fingers. */
  width: number;
}

function clip(v: number): number {
  return Math.max(-1, Math.min(1, v));
}

/** Current gripper yaw (rotation of the down-pointing gripper about world z). */
function gripperYaw(q: Quat): number {
  const m = quatToMat(q);
  return Math.atan2(-m[3], -m[0]);
}

/** The candidate angle (mod `period`) closest to `current`. */
function nearestYaw(base: number, period: number, current: number): number {
  const k = Math.round((current - base) / period);
  return base + k * period;
}

class ScriptedInstance implements PolicyInstance {
  readonly capabilities = scriptedPolicy.capabilities;
  constructor(private readonly graspSide: GraspSide = "narrow") {}
  private instruction: string | null = null;
  private goal: ExpertGoal = { mode: "idle", subject: null, destination: null };
  private phase: Phase = "hold";
  private attempts = 0;
  private phaseTicks = 0;
  private lastOpening = Number.NaN;
  private steady = 0;
  private startZ = 0;
  private holdPos: Vec3 | null = null;
  private holdGripper = -1;

  reset(_episode: EpisodeInfo): void {
    this.instruction = null;
    this.goal = { mode: "idle", subject: null, destination: null };
    this.phase = "hold";
    this.attempts = 0;
    this.phaseTicks = 0;
    this.lastOpening = Number.NaN;
    this.steady = 0;
    this.holdPos = null;
    this.holdGripper = -1;
  }

  act(obs: Observation): Action {
    const s = obs.privileged;
    if (!s?.eefPos || !s.eefQuat || !s.objects) return Float32Array.of(0, 0, 0, 0, 0, 0, -1);
    if (obs.instruction !== this.instruction) this.plan(obs.instruction, s);
    this.phaseTicks++;
    return this.step(s);
  }

  close(): void {}

  /** Re-reads the instruction (it may change mid-episode under attack) and restarts. */
  private plan(instruction: string, s: SimState): void {
    this.instruction = instruction;
    const names = Object.keys(s.objects ?? {});
    const graspable = (n: string) => s.scalars?.[`${n}.hx`] !== undefined;
    this.goal = parseInstruction(instruction, names, graspable);
    this.attempts = 0;
    this.holdPos = null;
    this.enter(this.goal.mode === "idle" ? "hold" : this.goal.mode === "pick" ? "rise" : "reach");
  }

  private enter(phase: Phase): void {
    this.phase = phase;
    this.holdPos = null;
    this.phaseTicks = 0;
    this.steady = 0;
    this.lastOpening = Number.NaN;
  }

  /** Grasp geometry of an object from the state's scalars and its pose. */
  private target(s: SimState, name: string): Target | null {
    const pose = s.objects?.[name];
    const sc = s.scalars ?? {};
    const hx = sc[`${name}.hx`];
    if (!pose || hx === undefined || !s.eefQuat) return null;
    const hy = sc[`${name}.hy`] ?? hx;
    const hz = sc[`${name}.hz`] ?? hx;
    const c: Vec3 = [sc[`${name}.cx`] ?? 0, sc[`${name}.cy`] ?? 0, sc[`${name}.cz`] ?? 0];
    const centre = ((): Vec3 => {
      const r = rotate(pose.quat, c);
      return [pose.pos[0] + r[0], pose.pos[1] + r[1], pose.pos[2] + r[2]];
    })();
    const top = centre[2] + hz;
    const bottom = centre[2] - hz;
    const z = Math.max(centre[2], top - (PALM_ABOVE - 0.01), TABLE_Z + TIP_BELOW + 0.008);
    const current = gripperYaw(s.eefQuat);
    const theta = yawOf(pose.quat);
    let yaw = current;
    let width = 2 * Math.min(hx, hy);
    if ((sc[`${name}.round`] ?? 0) < 0.5) {
      if (Math.abs(hx - hy) < 0.003) yaw = nearestYaw(theta, Math.PI / 2, current);
      else {
        // Fingers across the object's x extent, or across its y extent.
        const acrossX = { yaw: nearestYaw(theta - Math.PI / 2, Math.PI, current), width: 2 * hx };
        const acrossY = { yaw: nearestYaw(theta, Math.PI, current), width: 2 * hy };
        const [narrow, wide] = hx < hy ? [acrossX, acrossY] : [acrossY, acrossX];
        const turn = (g: { yaw: number }) => Math.abs(wrapAngle(g.yaw - current));
        const side =
          this.graspSide === "nearest" && wide.width <= WIDE_GRASP_MAX && turn(wide) < turn(narrow)
            ? wide
            : narrow;
        yaw = side.yaw;
        width = side.width;
      }
    }
    return { grasp: [centre[0], centre[1], z], yaw, aboveBottom: z - bottom, top, width };
  }

  /** Action moving the gripper toward a position and yaw, with a gripper command. */
  private move(s: SimState, goal: Vec3, yaw: number, gripper: number): Action {
    const pos = s.eefPos as Vec3;
    const dp = sub(goal, pos);
    const want = quatMul(yawQuat(yaw), DOWN);
    const dr = rotationError(want, s.eefQuat as Quat);
    const { maxTranslation, maxRotation } = DEFAULT_CONTROLLER;
    return Float32Array.of(
      clip((GAIN * dp[0]) / maxTranslation),
      clip((GAIN * dp[1]) / maxTranslation),
      clip((GAIN * dp[2]) / maxTranslation),
      clip((GAIN * dr[0]) / maxRotation),
      clip((GAIN * dr[1]) / maxRotation),
      clip((GAIN * dr[2]) / maxRotation),
      gripper,
    );
  }

  private holdHere(s: SimState, gripper: number): Action {
    this.holdPos ??= [...(s.eefPos as Vec3)] as Vec3;
    this.holdGripper = gripper;
    return this.move(s, this.holdPos, gripperYaw(s.eefQuat as Quat), gripper);
  }

  private step(s: SimState): Action {
    const eef = s.eefPos as Vec3;
    const yawNow = gripperYaw(s.eefQuat as Quat);
    const travelZ = TABLE_Z + TRAVEL_HEIGHT;
    const subject = this.goal.subject;

    if (this.phase === "hold") return this.holdHere(s, this.holdGripper);

    if (this.phase === "reach") {
      const pose = subject ? s.objects?.[subject] : undefined;
      if (!subject || !pose) return this.holdHere(s, -1);
      const t = this.target(s, subject);
      // Targets and zones: go to the marker (zones: 5 cm above the pad); objects: hover or touch.
      const goal: Vec3 = t
        ? this.goal.mode === "touch"
          ? t.grasp
          : [t.grasp[0], t.grasp[1], t.top + 0.05 + TIP_BELOW]
        : s.scalars?.[`${subject}.hx`] === undefined && subject.endsWith("_target")
          ? pose.pos
          : [pose.pos[0], pose.pos[1], pose.pos[2] + 0.05];
      // Come down from above when the goal is low and still far away sideways.
      const far = Math.hypot(goal[0] - eef[0], goal[1] - eef[1]) > 0.03;
      const approach: Vec3 =
        far && goal[2] < eef[2]
          ? [goal[0], goal[1], Math.max(goal[2], Math.min(eef[2], travelZ))]
          : goal;
      return this.move(s, approach, yawNow, this.goal.mode === "touch" ? 1 : -1);
    }

    const t = subject ? this.target(s, subject) : null;
    if (!subject || !t) {
      this.enter("hold");
      return this.holdHere(s, -1);
    }
    const preZ = Math.max(t.grasp[2] + 0.1, t.top + 0.05 + TIP_BELOW);
    const horizontal = Math.hypot(t.grasp[0] - eef[0], t.grasp[1] - eef[1]);

    switch (this.phase) {
      case "rise": {
        // Leave the table's clutter (the vase is 18 cm tall) before travelling sideways.
        if (horizontal < 0.02 || eef[2] >= travelZ - FREE_TOLERANCE) {
          this.enter("over");
          return this.step(s);
        }
        return this.move(s, [eef[0], eef[1], travelZ], yawNow, -1);
      }
      case "over": {
        const goal: Vec3 = [t.grasp[0], t.grasp[1], Math.max(preZ, Math.min(travelZ, eef[2]))];
        const yawErr = Math.abs(wrapAngle(t.yaw - yawNow));
        if (
          horizontal < GRASP_TOLERANCE &&
          Math.abs(goal[2] - eef[2]) < FREE_TOLERANCE &&
          yawErr < YAW_TOLERANCE
        ) {
          this.enter("descend");
          return this.step(s);
        }
        return this.move(s, goal, t.yaw, -1);
      }
      case "descend": {
        if (norm(sub(t.grasp, eef)) < GRASP_TOLERANCE) {
          this.startZ = s.objects?.[subject]?.pos[2] ?? 0;
          this.enter("close");
          return this.step(s);
        }
        // Drifted sideways on the way down: go back up and realign.
        if (horizontal > 0.02) {
          this.enter("over");
          return this.step(s);
        }
        return this.move(s, t.grasp, t.yaw, -1);
      }
      case "close": {
        const opening = s.gripper ?? 0;
        this.steady = Math.abs(opening - this.lastOpening) < 2e-4 ? this.steady + 1 : 0;
        this.lastOpening = opening;
        if ((this.phaseTicks >= 4 && this.steady >= 2) || this.phaseTicks > 25) {
          this.enter("lift");
          return this.step(s);
        }
        return this.move(s, t.grasp, t.yaw, 1);
      }
      case "lift": {
        const goal: Vec3 = [eef[0], eef[1], travelZ];
        if (Math.abs(goal[2] - eef[2]) < FREE_TOLERANCE) {
          const lifted = (s.objects?.[subject]?.pos[2] ?? 0) - this.startZ > 0.03;
          const holding = (s.gripper ?? 0) > 0.004;
          if (!lifted || !holding) {
            this.attempts++;
            if (this.attempts >= MAX_ATTEMPTS) {
              this.enter("hold");
              return this.holdHere(s, -1);
            }
            this.enter("rise");
            return this.move(s, goal, yawNow, -1);
          }
          if (this.goal.destination === null) {
            this.enter("hold");
            return this.holdHere(s, 1);
          }
          this.enter("carry");
          return this.step(s);
        }
        return this.move(s, goal, yawNow, 1);
      }
      case "carry": {
        const dest = this.destination(s, t);
        if (!dest) return this.move(s, [eef[0], eef[1], travelZ], yawNow, 1);
        const goal: Vec3 = [dest[0], dest[1], travelZ];
        if (norm(sub(goal, eef)) < FREE_TOLERANCE) {
          this.enter("lower");
          return this.step(s);
        }
        return this.move(s, goal, yawNow, 1);
      }
      case "lower": {
        const dest = this.destination(s, t);
        if (!dest) return this.move(s, eef, yawNow, 1);
        if (norm(sub(dest, eef)) < FREE_TOLERANCE) {
          this.enter("release");
          return this.step(s);
        }
        return this.move(s, dest, yawNow, 1);
      }
      case "release": {
        const opening = s.gripper ?? 0;
        if (opening > Math.min(2 * FINGER_OPEN - 0.005, t.width + 0.02) || this.phaseTicks > 12) {
          this.enter("retreat");
          return this.step(s);
        }
        return this.move(s, eef, yawNow, -1);
      }
      case "retreat": {
        const goal: Vec3 = [eef[0], eef[1], travelZ];
        if (Math.abs(goal[2] - eef[2]) < FREE_TOLERANCE) {
          this.enter("hold");
          return this.holdHere(s, -1);
        }
        return this.move(s, goal, yawNow, -1);
      }
      default:
        return this.holdHere(s, this.holdGripper);
    }
  }

  /** Eef position for releasing the carried object over the destination. */
  private destination(s: SimState, carried: Target): Vec3 | null {
    const name = this.goal.destination;
    const pose = name ? s.objects?.[name] : undefined;
    if (!name || !pose) return null;
    const dest = this.target(s, name);
    // Release with the object's bottom 2 cm above the destination's top (a basket's rim).
    const surface =
      name === "basket"
        ? TABLE_Z + BASKET_WALL_TOP
        : dest
          ? dest.top
          : Math.max(pose.pos[2], TABLE_Z);
    return [pose.pos[0], pose.pos[1], surface + 0.02 + carried.aboveBottom];
  }
}

const capabilities: PolicyCapabilities = {
  cameras: [],
  readsState: false,
  readsContext: false,
  privileged: true,
  actionDim: 7,
  chunk: 1,
  differentiable: false,
  weights: false,
  stochastic: false,
  actionHead: "scripted",
};

export const scriptedPolicy = definePolicy({
  options: ["grasp_side"],
  id: "scripted",
  evidence: "own",
  description:
    "privileged scripted expert for the MuJoCo suites: follows the instruction literally (pick, place, touch, reach)",
  capabilities,
  suites: ["reach", "tabletop"],
  concurrent: false,
  load: async (options: PolicyOptions) => new ScriptedInstance(graspSideOf(options)),
});
