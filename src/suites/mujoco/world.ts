/**
 * One running MuJoCo scene with the Provael arm: places a stored scene, steps the controller,
 * reads the simulator state predicates need and builds observations (optionally rendered by the
 * ray camera). The reach and tabletop suites are thin layers over this class.
 */
import { ProvaelError } from "../../core/errors.js";
import { lazyImages } from "../../core/lazy-images.js";
import type {
  Contact,
  Image,
  ObjectPose,
  Observation,
  Quat,
  SceneEdit,
  SimState,
  Vec3,
} from "../../core/types.js";
import { RayCamera } from "./camera.js";
import {
  ArmController,
  type ControllerSettings,
  FINGER_OPEN,
  HOME_JOINTS,
  ROBOT_BODIES,
} from "./controller.js";
import { applyEdit, type EditRecord, type GraspBox } from "./edits.js";
import { Engine } from "./engine.js";
import { quatToMat, quatToRotvec, yawQuat } from "./math.js";
import { signShader } from "./sign-text.js";
import { TRIGGERS, triggerShader } from "./trigger.js";

/** Camera settings of a suite. */
export interface RenderSettings {
  /** False returns zero-size images (fast benchmarks, expert evaluation). */
  enabled: boolean;
  width: number;
  height: number;
  cameras: readonly string[];
  /** Hard shadows from the key light (about 40% of a frame's cost). */
  shadows: boolean;
}

export const DEFAULT_RENDER: RenderSettings = {
  enabled: true,
  width: 128,
  height: 128,
  cameras: ["agentview", "wrist"],
  shadows: true,
};

export interface WorldConfig {
  /** MJCF file in assets/mujoco. */
  file: string;
  /** Bodies whose poses the state reports (movable objects, landmarks, markers). */
  objects: readonly string[];
  /** Movable objects: their grasp geometry goes into `SimState.scalars`. */
  graspable: readonly string[];
  render: RenderSettings;
  controller?: Partial<ControllerSettings>;
  /** Physics steps run after placing a scene so objects come to rest (part of the scene). */
  settleSteps?: number;
  assetsDir?: string;
}

/** Grasp geometry of an object in its body frame: centre offset and half extents. */
export type { GraspBox } from "./edits.js";

/** Body name -> [x, y, z, yaw] (metres, radians; yaw about the world z axis). */
export type Placement = Record<string, number[]>;

// mjtGeom values.
const GEOM_SPHERE = 2;
const GEOM_CYLINDER = 5;

/** Whether each finger touches a body: the tabletop's success test, and scripts that sort grasps. */
export function fingerContact(
  name: string,
  contacts: readonly Contact[],
): { left: boolean; right: boolean } {
  let left = false;
  let right = false;
  for (const c of contacts) {
    if (c.b !== name && c.a !== name) continue;
    const other = c.a === name ? c.b : c.a;
    if (other === "left_finger") left = true;
    if (other === "right_finger") right = true;
  }
  return { left, right };
}

/** A scene in MuJoCo with the arm, its controller and (optionally) cameras. */
export class MujocoWorld {
  readonly engine: Engine;
  readonly controller: ArmController;
  readonly config: WorldConfig;
  private readonly robotBodies: Set<number>;
  private readonly objectBodies = new Map<string, number>();
  private readonly graspBoxes = new Map<string, GraspBox>();
  private cameras: RayCamera[] = [];
  /** Bumped whenever the simulator state moves, so stale lazy images are caught. */
  private version = 0;
  private edits: EditRecord[] = [];
  private readonly usedSlots = new Set<string>();
  private modelDirty = false;

  private constructor(engine: Engine, config: WorldConfig) {
    this.engine = engine;
    this.config = config;
    this.controller = new ArmController(engine, config.controller);
    this.robotBodies = new Set(ROBOT_BODIES.map((b) => engine.id("body", b)));
    for (const name of config.objects) this.objectBodies.set(name, engine.id("body", name));
    for (const name of config.graspable) this.graspBoxes.set(name, this.measureGraspBox(name));
  }

  static async open(config: WorldConfig): Promise<MujocoWorld> {
    const engine = await Engine.load(
      config.file,
      config.assetsDir ? { assetsDir: config.assetsDir } : {},
    );
    return new MujocoWorld(engine, config);
  }

  /** Names of the bodies whose poses the state reports, scene edits included. */
  objectNames(): string[] {
    return [...this.objectBodies.keys()];
  }

  graspBox(name: string): GraspBox | undefined {
    return this.graspBoxes.get(name);
  }

  /**
   * Resets to a stored scene: pristine model, arm at home with the gripper open, objects at their
   * stored poses, then `settleSteps` of physics so the scene starts at rest.
   */
  placeScene(placement: Placement): void {
    this.version++;
    if (this.modelDirty) {
      this.engine.restoreModel();
      this.disposeCameras();
      this.modelDirty = false;
    }
    for (const record of this.edits) {
      this.objectBodies.delete(record.id);
      this.graspBoxes.delete(record.id);
    }
    this.edits = [];
    this.usedSlots.clear();
    const { engine } = this;
    engine.resetData();
    this.controller.placeJoints(HOME_JOINTS, FINGER_OPEN);
    for (const [name, pose] of Object.entries(placement)) this.placeBody(name, pose);
    engine.forward();
    engine.step(this.config.settleSteps ?? 20);
    engine.forward();
    this.controller.reset();
  }

  /** Puts a body at [x, y, z, yaw]: a free body through its joint, a mocap body directly. */
  placeBody(name: string, pose: readonly number[]): void {
    const { engine } = this;
    const m = engine.model;
    const body = engine.id("body", name);
    const [x = 0, y = 0, z = 0, yaw = 0] = pose;
    const q = yawQuat(yaw);
    const mocap = (m.body_mocapid as Int32Array)[body] ?? -1;
    if (mocap >= 0) {
      (engine.data.mocap_pos as Float64Array).set([x, y, z], 3 * mocap);
      (engine.data.mocap_quat as Float64Array).set(q, 4 * mocap);
      return;
    }
    const jnt = (m.body_jntadr as Int32Array)[body] ?? -1;
    if (jnt < 0 || ((m.jnt_type as Int32Array)[jnt] ?? -1) !== 0) {
      throw new ProvaelError(
        "suite/error",
        `body '${name}' has no free joint and cannot be placed`,
        {
          details: { body: name },
        },
      );
    }
    const adr = (m.jnt_qposadr as Int32Array)[jnt] ?? 0;
    const dadr = (m.jnt_dofadr as Int32Array)[jnt] ?? 0;
    (engine.data.qpos as Float64Array).set([x, y, z, ...q], adr);
    (engine.data.qvel as Float64Array).fill(0, dadr, dadr + 6);
  }

  /** Applies scene edits (after the scene digest was taken). */
  applyEdits(edits: readonly SceneEdit[]): void {
    if (edits.length === 0) return;
    this.version++;
    // Set first: a half-applied edit that throws must still be undone at the next reset.
    this.modelDirty = true;
    for (const edit of edits) {
      const record = applyEdit(this, edit, this.usedSlots);
      this.edits.push(record);
      this.objectBodies.set(record.id, record.body);
      if (record.grasp) this.graspBoxes.set(record.id, record.grasp);
    }
    // mj_setConst recomputes mass-dependent constants but runs kinematics at qpos0: restore.
    const edited = this.engine.saveState();
    this.engine.setConst();
    this.engine.restoreState(edited);
    this.controller.reset();
    this.applySignShaders();
  }

  /** Makes every camera draw the text of this episode's signs and the pattern of its triggers. */
  private applySignShaders(): void {
    for (const record of this.edits) {
      if (record.sign) {
        const { geom, halfWidth, halfHeight, thickness, text } = record.sign;
        const shader = text ? signShader(text, halfWidth, halfHeight, thickness) : null;
        for (const cam of this.cameras) cam.setSurfaceShader(geom, shader);
      }
      const def = record.trigger ? TRIGGERS[record.trigger.name] : undefined;
      if (record.trigger && def) {
        const shader = triggerShader(def);
        for (const cam of this.cameras) cam.setSurfaceShader(record.trigger.geom, shader);
      }
    }
  }

  /** One control tick: the action sets servo targets, then physics runs for one tick. */
  tick(action: ArrayLike<number>): void {
    this.version++;
    this.controller.apply(action);
    this.engine.step(this.controller.substeps);
    this.engine.forward();
  }

  bodyPose(body: number): ObjectPose {
    const d = this.engine.data;
    const p = d.xpos as Float64Array;
    const q = d.xquat as Float64Array;
    return {
      pos: [p[3 * body] ?? 0, p[3 * body + 1] ?? 0, p[3 * body + 2] ?? 0],
      quat: [q[4 * body] ?? 1, q[4 * body + 1] ?? 0, q[4 * body + 2] ?? 0, q[4 * body + 3] ?? 0],
    };
  }

  objectPose(name: string): ObjectPose {
    const body = this.objectBodies.get(name) ?? this.engine.id("body", name);
    return this.bodyPose(body);
  }

  /** Linear speed of a body's free joint, m/s (0 for a body without one). */
  objectSpeed(name: string): number {
    const { model, data } = this.engine;
    const body = this.objectBodies.get(name) ?? this.engine.id("body", name);
    const jnt = (model.body_jntadr as Int32Array)[body] ?? -1;
    if (jnt < 0) return 0;
    const adr = (model.jnt_dofadr as Int32Array)[jnt] ?? 0;
    const v = data.qvel as Float64Array;
    return Math.hypot(v[adr] ?? 0, v[adr + 1] ?? 0, v[adr + 2] ?? 0);
  }

  /**
   * Robot-involved contacts with normal forces, one entry per pair of bodies (`a` the robot body,
   * `b` the other) with the forces of all its contact points summed: MuJoCo splits one touch
   * into several points, and a hazard threshold is about the whole push.
   */
  robotContacts(): Contact[] {
    const readings = this.engine.contacts(
      (b1, b2) => this.robotBodies.has(b1) || this.robotBodies.has(b2),
    );
    const pairs = new Map<string, Contact>();
    for (const r of readings) {
      const robotFirst = this.robotBodies.has(r.body1);
      const a = this.bodyName(robotFirst ? r.body1 : r.body2);
      const b = this.bodyName(robotFirst ? r.body2 : r.body1);
      const key = `${a}\u0000${b}`;
      const existing = pairs.get(key);
      if (existing) existing.force += r.force;
      else pairs.set(key, { a, b, force: r.force });
    }
    return [...pairs.values()];
  }

  private bodyName(body: number): string {
    for (const [name, id] of this.objectBodies) if (id === body) return name;
    return this.engine.name("body", body) || `body${body}`;
  }

  /** The simulator state predicates and the privileged expert read. */
  simState(contacts: Contact[] = this.robotContacts()): SimState {
    const ctl = this.controller;
    const [l, r] = ctl.fingerPositions();
    const objects: Record<string, ObjectPose> = {};
    for (const [name, body] of this.objectBodies) objects[name] = this.bodyPose(body);
    const scalars: Record<string, number> = {};
    for (const [name, box] of this.graspBoxes) {
      scalars[`${name}.cx`] = box.center[0];
      scalars[`${name}.cy`] = box.center[1];
      scalars[`${name}.cz`] = box.center[2];
      scalars[`${name}.hx`] = box.half[0];
      scalars[`${name}.hy`] = box.half[1];
      scalars[`${name}.hz`] = box.half[2];
      scalars[`${name}.round`] = box.round ? 1 : 0;
    }
    scalars.time = this.engine.data.time;
    return {
      eefPos: ctl.eefPos(),
      eefQuat: ctl.eefQuat(),
      gripper: l + r,
      joints: ctl.armJoints(),
      objects,
      contacts,
      scalars,
    };
  }

  /** LIBERO-layout proprioception: eef position, eef axis-angle, the two finger travels. */
  stateVector(eefPos: Vec3, eefQuat: Quat): Float32Array {
    const [l, r] = this.controller.fingerPositions();
    const aa = quatToRotvec(eefQuat);
    return Float32Array.of(eefPos[0], eefPos[1], eefPos[2], aa[0], aa[1], aa[2], l, r);
  }

  observation(instruction: string, state: SimState): Observation {
    const eefPos = state.eefPos ?? this.controller.eefPos();
    const eefQuat = state.eefQuat ?? this.controller.eefQuat();
    return {
      images: this.lazyRender(),
      state: this.stateVector(eefPos, eefQuat),
      instruction,
      privileged: state,
    };
  }

  /**
   * The configured cameras, each rendered when first read and only while the simulator is still
   * at this tick (see core/lazy-images.ts): chunked policies read images only when they replan.
   */
  lazyRender(): Record<string, Image> {
    const { render } = this.config;
    if (!render.enabled) return this.render();
    const at = this.version;
    // Every camera renders at the configured size: declared, a patch is placed without a render.
    const shape = { width: render.width, height: render.height, channels: 3 };
    return lazyImages(
      render.cameras,
      (camera) => this.renderCamera(camera),
      () => this.version === at,
      undefined,
      Object.fromEntries(render.cameras.map((c) => [c, shape])),
    );
  }

  private renderCamera(camera: string): Image {
    this.ensureCameras();
    const cam = this.cameras.find((c) => c.cameraName === camera);
    if (!cam) throw new Error(`no camera '${camera}'`);
    return cam.render(this.engine.data).rgb;
  }

  private ensureCameras(): void {
    if (this.cameras.length > 0) return;
    const { render } = this.config;
    const { mj, model } = this.engine;
    this.cameras = render.cameras.map(
      (camera) =>
        new RayCamera(mj, model, {
          camera,
          width: render.width,
          height: render.height,
          shadows: render.shadows,
        }),
    );
    this.applySignShaders();
  }

  /** Renders every configured camera, or zero-size images when rendering is off. */
  render(): Record<string, Image> {
    const { render } = this.config;
    const images: Record<string, Image> = {};
    if (!render.enabled) {
      for (const cam of render.cameras) {
        images[cam] = { width: 0, height: 0, channels: 3, data: new Uint8Array(0) };
      }
      return images;
    }
    this.ensureCameras();
    for (const cam of this.cameras) images[cam.cameraName] = cam.render(this.engine.data).rgb;
    return images;
  }

  /** Grasp region of a body: a `<name>_grasp` box site if the MJCF has one, else its geoms' box. */
  measureGraspBox(name: string): GraspBox {
    const { engine } = this;
    const m = engine.model;
    const siteId = engine.findId("site", `${name}_grasp`);
    if (siteId < 0) return this.geomBox(name);
    const sp = m.site_pos as Float64Array;
    const ss = m.site_size as Float64Array;
    return {
      center: [sp[3 * siteId] ?? 0, sp[3 * siteId + 1] ?? 0, sp[3 * siteId + 2] ?? 0],
      half: [ss[3 * siteId] ?? 0, ss[3 * siteId + 1] ?? 0, ss[3 * siteId + 2] ?? 0],
      round: false,
    };
  }

  /** Bounding box of a body's geoms in its own frame; `round` when its first geom is round. */
  geomBox(name: string): GraspBox {
    const { engine } = this;
    const m = engine.model;
    const body = engine.id("body", name);
    const geomAdr = (m.body_geomadr as Int32Array)[body] ?? 0;
    const geomNum = (m.body_geomnum as Int32Array)[body] ?? 0;
    const firstType = (m.geom_type as Int32Array)[geomAdr] ?? -1;
    const lo: Vec3 = [Infinity, Infinity, Infinity];
    const hi: Vec3 = [-Infinity, -Infinity, -Infinity];
    const aabb = m.geom_aabb as Float64Array;
    const gpos = m.geom_pos as Float64Array;
    const gquat = m.geom_quat as Float64Array;
    const contype = m.geom_contype as Int32Array;
    const conaff = m.geom_conaffinity as Int32Array;
    for (let g = geomAdr; g < geomAdr + geomNum; g++) {
      // Visual-only decorations (flowers, lids) are not part of what a gripper can touch.
      if ((contype[g] ?? 0) === 0 && (conaff[g] ?? 0) === 0) continue;
      const c: Vec3 = [aabb[6 * g] ?? 0, aabb[6 * g + 1] ?? 0, aabb[6 * g + 2] ?? 0];
      const h: Vec3 = [aabb[6 * g + 3] ?? 0, aabb[6 * g + 4] ?? 0, aabb[6 * g + 5] ?? 0];
      const R = quatToMat([
        gquat[4 * g] ?? 1,
        gquat[4 * g + 1] ?? 0,
        gquat[4 * g + 2] ?? 0,
        gquat[4 * g + 3] ?? 0,
      ]);
      for (let i = 0; i < 3; i++) {
        const centre =
          (gpos[3 * g + i] ?? 0) +
          (R[3 * i] ?? 0) * c[0] +
          (R[3 * i + 1] ?? 0) * c[1] +
          (R[3 * i + 2] ?? 0) * c[2];
        const extent =
          Math.abs(R[3 * i] ?? 0) * h[0] +
          Math.abs(R[3 * i + 1] ?? 0) * h[1] +
          Math.abs(R[3 * i + 2] ?? 0) * h[2];
        lo[i] = Math.min(lo[i] ?? 0, centre - extent);
        hi[i] = Math.max(hi[i] ?? 0, centre + extent);
      }
    }
    if (!Number.isFinite(lo[0])) return { center: [0, 0, 0], half: [0, 0, 0], round: false };
    return {
      center: [(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2],
      half: [(hi[0] - lo[0]) / 2, (hi[1] - lo[1]) / 2, (hi[2] - lo[2]) / 2],
      round: firstType === GEOM_CYLINDER || firstType === GEOM_SPHERE,
    };
  }

  private disposeCameras(): void {
    for (const cam of this.cameras) cam.dispose();
    this.cameras = [];
  }

  close(): void {
    this.disposeCameras();
    this.controller.close();
    this.engine.close();
  }
}
