/**
 * Key layouts, the presets: what a layout is (images, state, prompt, context, constants, the
 * reply's actions) and the ones that follow the upstream examples (PROTOCOLS.md §1.4).
 */
import { type WireMap, wireMap } from "../codec/tree.js";
import type { ResizeMethod } from "../image.js";

export interface ImageSpec {
  /** Key path in the request (`["observation/image"]`, `["images", "cam_high"]`). */
  key: string[];
  camera: string;
  /** [width, height] sent; null sends the native size. */
  size: [number, number] | null;
  rotate180: boolean;
  format: "HWC" | "CHW";
  resize: ResizeMethod;
  /** What to send when the suite has no such camera. */
  missing: "zeros" | "skip" | "error";
}

export interface StateSpec {
  key: string[];
  /** Indices into the suite's state vector, or all of it. */
  indices: number[] | "all";
  dtype: "float32" | "float64";
  /** Pad with zeros to this length. */
  pad: number | null;
  /** Send a 0-d value (one index only). */
  scalar: boolean;
}

export interface ActionSpec {
  key: string;
  /** D of the reply's (H, D) array. */
  dim: number;
  /** For each of our action dims, the reply column it comes from (null: 0). */
  select: Array<number | null>;
  /** Our value = reply value * scale + offset, per our dim. */
  scale: number[];
  offset: number[];
}

export interface Layout {
  name: string;
  images: ImageSpec[];
  state: StateSpec[];
  prompt: string[] | null;
  /** Where the Observation's context lines go (a list of str), or null to drop them. */
  context: string[] | null;
  constants: WireMap;
  actions: ActionSpec;
  /** Send `provael/episode` ({id, task, seed, policy_seed}) so a server can reset per episode. */
  episodeKeys: boolean;
  /** Actions executed from each chunk before asking again (the client's default). */
  replan: number;
}

/** The key our client uses to tell a server which episode an observation belongs to. */
export const EPISODE_KEY = "provael/episode";
export const CONTEXT_KEY = "provael/context";

/** Our action size (6 motion dims and the gripper). */
export const OUR_DIM = 7;
export const identity = (n: number) => Array.from({ length: n }, (_, i) => i);

function img(key: string[], camera: string, over: Partial<ImageSpec> = {}): ImageSpec {
  return {
    key,
    camera,
    size: [224, 224],
    rotate180: false,
    format: "HWC",
    resize: "nearest",
    missing: "zeros",
    ...over,
  };
}

function actions(dim: number, select: Array<number | null>, over: Partial<ActionSpec> = {}) {
  return {
    key: "actions",
    dim,
    select,
    scale: new Array(OUR_DIM).fill(1),
    offset: new Array(OUR_DIM).fill(0),
    ...over,
  };
}

/**
 * LIBERO (`pi05_libero`, `pi0_libero`): both cameras 224x224 rotated 180° like the example client,
 * the suite's state as float64 (8-D on LIBERO-format suites: eef pos, axis-angle, two fingers),
 * replies (H, 7) used as they are, 5 actions per chunk.
 */
export const LIBERO: Layout = {
  name: "libero",
  images: [
    img(["observation/image"], "agentview", { rotate180: true }),
    img(["observation/wrist_image"], "wrist", { rotate180: true }),
  ],
  state: [
    { key: ["observation/state"], indices: "all", dtype: "float64", pad: null, scalar: false },
  ],
  prompt: ["prompt"],
  context: [CONTEXT_KEY],
  constants: wireMap(),
  actions: actions(7, identity(7)),
  episodeKeys: true,
  replan: 5,
};

/**
 * DROID (`pi05_droid`): exterior and wrist cameras, joint_position from state[0..6] and
 * gripper_position from state[7]. Replies are (H, 8) joint velocities + gripper position in
 * [0, 1]; columns 0-5 feed our dims 0-5 and column 7 our gripper, mapped to [-1, 1]. This is a
 * shape-compatible mapping for smoke tests: our suites take end-effector deltas, not joint
 * velocities.
 */
const DROID: Layout = {
  name: "droid",
  images: [
    img(["observation/exterior_image_1_left"], "agentview"),
    img(["observation/wrist_image_left"], "wrist"),
  ],
  state: [
    {
      key: ["observation/joint_position"],
      indices: identity(7),
      dtype: "float64",
      pad: null,
      scalar: false,
    },
    {
      key: ["observation/gripper_position"],
      indices: [7],
      dtype: "float64",
      pad: null,
      scalar: false,
    },
  ],
  prompt: ["prompt"],
  context: [CONTEXT_KEY],
  constants: wireMap(),
  actions: actions(8, [0, 1, 2, 3, 4, 5, 7], {
    scale: [1, 1, 1, 1, 1, 1, 2],
    offset: [0, 0, 0, 0, 0, 0, -1],
  }),
  episodeKeys: true,
  replan: 8,
};

/**
 * ALOHA (`pi0_aloha_sim`): CHW images under `images` (cam_high from agentview, cam_left_wrist
 * from wrist), the state zero-padded to 14. Replies are (H, 14); columns 0-6 (left arm joints and
 * gripper) feed our 7 dims as they are. Shape-compatible only, like DROID.
 */
const ALOHA: Layout = {
  name: "aloha",
  images: [
    img(["images", "cam_high"], "agentview", { format: "CHW" }),
    img(["images", "cam_left_wrist"], "wrist", { format: "CHW", missing: "skip" }),
  ],
  state: [{ key: ["state"], indices: "all", dtype: "float64", pad: 14, scalar: false }],
  prompt: ["prompt"],
  context: [CONTEXT_KEY],
  constants: wireMap(),
  actions: actions(14, identity(7)),
  episodeKeys: true,
  replan: 10,
};

/**
 * OpenVLA's `/act` body: one 224x224 image (rotated like its LIBERO eval) and the instruction.
 * OpenVLA reads no state; we add it as `provael/state`, which deploy.py ignores, so a policy
 * served by `provael serve-policy` that reads state still gets it.
 */
const OPENVLA: Layout = {
  name: "openvla",
  images: [img(["image"], "agentview", { rotate180: true, missing: "error" })],
  state: [{ key: ["provael/state"], indices: "all", dtype: "float32", pad: null, scalar: false }],
  prompt: ["instruction"],
  context: [CONTEXT_KEY],
  constants: wireMap(),
  actions: actions(7, identity(7)),
  episodeKeys: true,
  replan: 1,
};

/** vla-eval's observation payload: native-size HWC images by camera, `states`, `task_description`. */
const VLA_EVAL: Layout = {
  name: "vla-eval",
  images: [
    img(["images", "agentview"], "agentview", { size: null, missing: "skip" }),
    img(["images", "wrist"], "wrist", { size: null, missing: "skip" }),
  ],
  state: [{ key: ["states"], indices: "all", dtype: "float32", pad: null, scalar: false }],
  prompt: ["task_description"],
  context: [CONTEXT_KEY],
  constants: wireMap(),
  actions: actions(7, identity(7)),
  // vla-eval has episode_start; no per-observation episode key is needed.
  episodeKeys: false,
  replan: 1,
};

export const LAYOUTS: Record<string, Layout> = {
  libero: LIBERO,
  droid: DROID,
  aloha: ALOHA,
  openvla: OPENVLA,
  "vla-eval": VLA_EVAL,
};

/** Cameras a layout sends (in order, once each). */
export function layoutCameras(layout: Layout): string[] {
  return [...new Set(layout.images.map((i) => i.camera))];
}
