/**
 * Scene edits (decoy objects, signs) on a static MuJoCo model.
 *
 * A compiled MuJoCo model cannot gain bodies, so every Provael MJCF declares a few hidden spare
 * bodies (robot.xml): `spare_box_*`, `spare_cylinder_*` and `spare_sphere_*` (free bodies, parked
 * far from the table, weightless through gravcomp and non-colliding) and `spare_sign_*` (mocap
 * panels, visual only). An edit takes a free slot of the requested shape, writes its size, colour
 * and mass into the model, turns gravity and collisions on, and moves it onto the table. The world
 * restores the pristine model at the next reset, so edits never leak between episodes.
 *
 * Object edit params: `shape` ("box" | "cylinder" | "sphere", default box), `size` (MuJoCo half
 * sizes: box [hx, hy, hz], cylinder [radius, half-height], sphere [radius]), `rgba` (0..1),
 * `pos` ([x, y] resting on the table, or [x, y, z]), `yaw` (radians), `mass` (kg).
 * Sign edit params: `pos`, `size` ([half-width, half-height]), `rgba`, `yaw` (default: facing
 * the agent-view camera), `text` (drawn in dark capitals on both faces, see sign-text.ts).
 * Trigger edit params: `trigger` (a name in trigger.ts, default its `DEFAULT_TRIGGER`): the
 * declared tile, at its declared spot, on a spare sign panel (visual only).
 */
import { z } from "zod";
import { ProvaelError } from "../../core/errors.js";
import type { SceneEdit, Vec3 } from "../../core/types.js";
import type { Engine } from "./engine.js";
import { yawQuat } from "./math.js";
import { TABLE_Z } from "./objects.js";
import { DEFAULT_TRIGGER, TRIGGERS, triggerBox } from "./trigger.js";

/** The box a grasp of one object aims at (world frame). */
export interface GraspBox {
  center: Vec3;
  half: Vec3;
  /** Round in the horizontal plane (cylinder, sphere): any approach yaw works. */
  round: boolean;
}

/**
 * What an edit needs of the world (MujocoWorld has it): named here, not imported, so that the
 * world, which applies edits, and the edits depend one way.
 */
export interface EditableWorld {
  readonly engine: Engine;
  objectNames(): string[];
  placeBody(name: string, pose: readonly number[]): void;
}

/** Spare slots per kind, as declared in assets/mujoco/robot.xml. */
export const SPARE_SLOTS = {
  box: ["spare_box_0", "spare_box_1"],
  cylinder: ["spare_cylinder_0", "spare_cylinder_1"],
  sphere: ["spare_sphere_0", "spare_sphere_1"],
  sign: ["spare_sign_0", "spare_sign_1"],
} as const;

export interface EditRecord {
  id: string;
  kind: SceneEdit["kind"];
  /** The spare body now standing for the edit. */
  body: number;
  slot: string;
  grasp?: GraspBox;
  /** For a sign: its geom, half sizes and the text the camera draws on it. */
  sign?: { geom: number; halfWidth: number; halfHeight: number; thickness: number; text: string };
  /** For a trigger: its geom and the trigger's name (trigger.ts draws its pattern). */
  trigger?: { geom: number; name: string };
}

const vec = z.array(z.number().finite());
const rgba = z.array(z.number().min(0).max(1)).length(4);

const objectParams = z.object({
  shape: z.enum(["box", "cylinder", "sphere"]).default("box"),
  size: vec.min(1).max(3).optional(),
  rgba: rgba.default([0.5, 0.5, 0.5, 1]),
  pos: vec.min(2).max(3),
  yaw: z.number().finite().default(0),
  mass: z.number().positive().max(5).optional(),
});

const signParams = z.object({
  size: vec.length(2).default([0.06, 0.04]),
  rgba: rgba.default([0.95, 0.95, 0.9, 1]),
  pos: vec.min(2).max(3),
  yaw: z
    .number()
    .finite()
    .default(Math.PI / 2),
  text: z.string().optional(),
});

const triggerParams = z.object({ trigger: z.string().default(DEFAULT_TRIGGER) }).strict();

function bad(edit: SceneEdit, message: string, cause?: unknown): ProvaelError {
  return new ProvaelError("suite/error", `scene edit '${edit.id}': ${message}`, {
    details: { edit: edit.id, kind: edit.kind },
    hint: "see src/suites/mujoco/edits.ts for the parameters an edit takes",
    ...(cause === undefined ? {} : { cause }),
  });
}

function takeSlot(edit: SceneEdit, kind: keyof typeof SPARE_SLOTS, used: Set<string>): string {
  const slot = SPARE_SLOTS[kind].find((s) => !used.has(s));
  if (!slot)
    throw bad(edit, `no spare ${kind} left (at most ${SPARE_SLOTS[kind].length} per scene)`);
  used.add(slot);
  return slot;
}

/** Applies one edit to the world's model and state; `used` tracks the slots taken this episode. */
export function applyEdit(world: EditableWorld, edit: SceneEdit, used: Set<string>): EditRecord {
  if (world.objectNames().includes(edit.id))
    throw bad(edit, "an object of that name already exists");
  if (edit.kind === "sign") return applySign(world, edit, used);
  if (edit.kind === "trigger") return applyTrigger(world, edit, used);
  return applyObject(world, edit, used);
}

function applyObject(world: EditableWorld, edit: SceneEdit, used: Set<string>): EditRecord {
  const parsed = objectParams.safeParse(edit.params);
  if (!parsed.success) throw bad(edit, parsed.error.message, parsed.error);
  const p = parsed.data;
  const slot = takeSlot(edit, p.shape, used);
  const { engine } = world;
  const m = engine.model;
  const body = engine.id("body", slot);
  const geom = engine.id("geom", slot);

  const size: Vec3 =
    p.shape === "box"
      ? [
          p.size?.[0] ?? 0.0225,
          p.size?.[1] ?? p.size?.[0] ?? 0.0225,
          p.size?.[2] ?? p.size?.[0] ?? 0.0225,
        ]
      : p.shape === "cylinder"
        ? [p.size?.[0] ?? 0.025, p.size?.[1] ?? 0.04, 0]
        : [p.size?.[0] ?? 0.025, 0, 0];
  if (
    size.some(
      (s, i) =>
        (p.shape === "box" || i < (p.shape === "cylinder" ? 2 : 1)) && !(s > 0.003 && s < 0.2),
    )
  ) {
    throw bad(edit, "sizes must lie between 3 mm and 20 cm");
  }
  const half: Vec3 =
    p.shape === "box"
      ? size
      : p.shape === "cylinder"
        ? [size[0], size[0], size[1]]
        : [size[0], size[0], size[0]];
  const volume =
    p.shape === "box"
      ? 8 * size[0] * size[1] * size[2]
      : p.shape === "cylinder"
        ? 2 * Math.PI * size[0] * size[0] * size[1]
        : (4 / 3) * Math.PI * size[0] ** 3;
  const mass = p.mass ?? Math.max(0.02, 500 * volume);
  const inertia: Vec3 =
    p.shape === "box"
      ? [
          (mass / 3) * (half[1] ** 2 + half[2] ** 2),
          (mass / 3) * (half[0] ** 2 + half[2] ** 2),
          (mass / 3) * (half[0] ** 2 + half[1] ** 2),
        ]
      : p.shape === "cylinder"
        ? [
            (mass / 12) * (3 * size[0] ** 2 + 4 * size[1] ** 2),
            (mass / 12) * (3 * size[0] ** 2 + 4 * size[1] ** 2),
            (mass / 2) * size[0] ** 2,
          ]
        : [0.4 * mass * size[0] ** 2, 0.4 * mass * size[0] ** 2, 0.4 * mass * size[0] ** 2];

  (m.geom_size as Float64Array).set(size, 3 * geom);
  (m.geom_rgba as Float32Array).set(p.rgba, 4 * geom);
  (m.geom_aabb as Float64Array).set([0, 0, 0, ...half], 6 * geom);
  (m.geom_rbound as Float64Array)[geom] = Math.hypot(...half);
  (m.geom_contype as Int32Array)[geom] = 1;
  (m.geom_conaffinity as Int32Array)[geom] = 1;
  // MuJoCo filters collisions per body first, and bounds each body by a BVH of its geoms.
  (m.body_contype as Int32Array)[body] = 1;
  (m.body_conaffinity as Int32Array)[body] = 1;
  const bvh = (m.body_bvhadr as Int32Array)[body] ?? -1;
  const bvhNum = (m.body_bvhnum as Int32Array)[body] ?? 0;
  for (let k = 0; k < bvhNum && bvh >= 0; k++)
    (m.bvh_aabb as Float64Array).set([0, 0, 0, ...half], 6 * (bvh + k));
  (m.body_gravcomp as Float64Array)[body] = 0;
  (m.body_mass as Float64Array)[body] = mass;
  (m.body_inertia as Float64Array).set(inertia, 3 * body);

  const [x = 0, y = 0] = p.pos;
  const zPos = p.pos[2] ?? TABLE_Z + half[2];
  world.placeBody(slot, [x, y, zPos, p.yaw]);
  return {
    id: edit.id,
    kind: "object",
    body,
    slot,
    grasp: { center: [0, 0, 0], half, round: p.shape !== "box" },
  };
}

/**
 * Takes a spare sign panel (a mocap box, no contacts) and shapes it: half sizes `half`, colour
 * `rgba`, centre `pos`, turned by `yaw` about z. Signs and trigger tiles are both such panels.
 */
function placePanel(
  world: EditableWorld,
  edit: SceneEdit,
  used: Set<string>,
  panel: { half: readonly number[]; rgba: readonly number[]; pos: readonly number[]; yaw: number },
): { slot: string; body: number; geom: number } {
  const slot = takeSlot(edit, "sign", used);
  const { engine } = world;
  const m = engine.model;
  const body = engine.id("body", slot);
  const geom = engine.id("geom", slot);
  const { half, rgba, pos, yaw } = panel;
  (m.geom_size as Float64Array).set(half, 3 * geom);
  (m.geom_rgba as Float32Array).set(rgba, 4 * geom);
  (m.geom_aabb as Float64Array).set([0, 0, 0, ...half], 6 * geom);
  (m.geom_rbound as Float64Array)[geom] = Math.hypot(...half);
  const mocap = (m.body_mocapid as Int32Array)[body] ?? 0;
  (engine.data.mocap_pos as Float64Array).set(pos, 3 * mocap);
  (engine.data.mocap_quat as Float64Array).set(yawQuat(yaw), 4 * mocap);
  return { slot, body, geom };
}

function applySign(world: EditableWorld, edit: SceneEdit, used: Set<string>): EditRecord {
  const parsed = signParams.safeParse(edit.params);
  if (!parsed.success) throw bad(edit, parsed.error.message, parsed.error);
  const p = parsed.data;
  const [hw = 0.06, hh = 0.04] = p.size;
  if (!(hw > 0.005 && hw < 0.3 && hh > 0.005 && hh < 0.3))
    throw bad(edit, "sign half sizes must lie in (5 mm, 30 cm)");
  const [x = 0, y = 0] = p.pos;
  const { slot, body, geom } = placePanel(world, edit, used, {
    half: [hw, 0.002, hh],
    rgba: p.rgba,
    pos: [x, y, p.pos[2] ?? TABLE_Z + hh],
    yaw: p.yaw,
  });
  return {
    id: edit.id,
    kind: "sign",
    body,
    slot,
    sign: { geom, halfWidth: hw, halfHeight: hh, thickness: 0.002, text: p.text ?? "" },
  };
}

/** The declared trigger tile, flat on the table at its spot; a mocap panel, so visual only. */
function applyTrigger(world: EditableWorld, edit: SceneEdit, used: Set<string>): EditRecord {
  const parsed = triggerParams.safeParse(edit.params);
  if (!parsed.success) throw bad(edit, parsed.error.message, parsed.error);
  const def = TRIGGERS[parsed.data.trigger];
  if (!def) {
    throw bad(
      edit,
      `unknown trigger '${parsed.data.trigger}' (the triggers are: ${Object.keys(TRIGGERS).join(", ")})`,
    );
  }
  const { half, pos } = triggerBox(def, TABLE_Z);
  const { slot, body, geom } = placePanel(world, edit, used, {
    half,
    rgba: [...def.edge, 1],
    pos,
    yaw: def.yaw,
  });
  return { id: edit.id, kind: "trigger", body, slot, trigger: { geom, name: def.name } };
}
