/**
 * Key layouts: how an Observation becomes a served policy's request and how its reply becomes our
 * 7-D actions. Presets follow the upstream examples (PROTOCOLS.md §1.4); a user mapping file
 * (YAML or JSON, checked with zod) covers anything else. The server side runs the same layout
 * backwards, so a policy served by `provael serve-policy` sees what it would see in-process.
 */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { ProvaelError } from "../../core/errors.js";
import { forwardEncoded } from "../../core/lazy-images.js";
import type { Action, EpisodeInfo, Image, Observation } from "../../core/types.js";
import { describeIssues } from "../../core/zod-issues.js";
import {
  expectFloat,
  float32Array,
  float64Array,
  type NdArray,
  toFloat64,
  toUint8,
  uint8Array,
} from "./codec/ndarray.js";
import {
  asMap,
  asNdArray,
  asString,
  describe,
  fromJson,
  getPath,
  isWireMap,
  setPath,
  type WireMap,
  type WireValue,
  wireMap,
} from "./codec/tree.js";
import { EncodedImage } from "./codec/vla-eval.js";
import { blank, fromChw, type ResizeMethod, toChw, transform } from "./image.js";

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

const OUR_DIM = 7;
const identity = (n: number) => Array.from({ length: n }, (_, i) => i);

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
const LIBERO: Layout = {
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

// ---------------------------------------------------------------------------------------------
// User mapping files

const keyPath = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);
const size = z.union([
  z.number().int().positive(),
  z.tuple([z.number().int().positive(), z.number().int().positive()]),
]);

const imageFile = z
  .object({
    key: keyPath,
    camera: z.string().min(1),
    size: size.nullable().optional(),
    rotate180: z.boolean().optional(),
    format: z.enum(["HWC", "CHW"]).optional(),
    resize: z.enum(["nearest", "bilinear"]).optional(),
    missing: z.enum(["zeros", "skip", "error"]).optional(),
  })
  .strict();

const stateFile = z
  .object({
    key: keyPath,
    indices: z.union([z.literal("all"), z.array(z.number().int().min(0)).min(1)]).optional(),
    dtype: z.enum(["float32", "float64"]).optional(),
    pad: z.number().int().positive().nullable().optional(),
    scalar: z.boolean().optional(),
  })
  .strict();

/** The mapping file format (see docs/served-policies.md). */
export const layoutFileSchema = z
  .object({
    extends: z.enum(["libero", "droid", "aloha", "openvla", "vla-eval"]).optional(),
    images: z.array(imageFile).optional(),
    state: z.array(stateFile).optional(),
    prompt: keyPath.nullable().optional(),
    context: keyPath.nullable().optional(),
    constants: z.record(z.string(), z.unknown()).optional(),
    actions: z
      .object({
        key: z.string().min(1).optional(),
        dim: z.number().int().positive(),
        select: z.array(z.number().int().min(0).nullable()).length(OUR_DIM).optional(),
        scale: z.array(z.number()).length(OUR_DIM).optional(),
        offset: z.array(z.number()).length(OUR_DIM).optional(),
      })
      .strict()
      .optional(),
    episode_keys: z.boolean().optional(),
    replan: z.number().int().positive().optional(),
  })
  .strict();

export type LayoutFile = z.infer<typeof layoutFileSchema>;

const asPath = (k: string | string[]) => (typeof k === "string" ? [k] : k);
const asSize = (s: number | [number, number]): [number, number] =>
  typeof s === "number" ? [s, s] : s;

/** Builds a layout from a parsed mapping file (fields replace the preset's it extends). */
export function layoutFromFile(file: LayoutFile, name: string): Layout {
  const base: Layout = file.extends
    ? (LAYOUTS[file.extends] as Layout)
    : { ...LIBERO, images: [], state: [], prompt: ["prompt"], constants: wireMap(), name };
  const images: ImageSpec[] = file.images
    ? file.images.map((i) => ({
        key: asPath(i.key),
        camera: i.camera,
        size: i.size === undefined ? [224, 224] : i.size === null ? null : asSize(i.size),
        rotate180: i.rotate180 ?? false,
        format: i.format ?? "HWC",
        resize: i.resize ?? "nearest",
        missing: i.missing ?? (i.size === null ? "skip" : "zeros"),
      }))
    : base.images;
  const state: StateSpec[] = file.state
    ? file.state.map((s) => ({
        key: asPath(s.key),
        indices: s.indices ?? "all",
        dtype: s.dtype ?? "float32",
        pad: s.pad ?? null,
        scalar: s.scalar ?? false,
      }))
    : base.state;
  for (const s of state) {
    if (s.scalar && (s.indices === "all" || s.indices.length !== 1))
      throw new ProvaelError(
        "config/invalid",
        `state key ${s.key.join(".")}: scalar needs one index`,
      );
  }
  const a = file.actions;
  const dim = a?.dim ?? base.actions.dim;
  const select = a?.select ?? (a ? identity(Math.min(OUR_DIM, dim)) : base.actions.select);
  while (select.length < OUR_DIM) select.push(null);
  for (const s of select) {
    if (s !== null && s >= dim)
      throw new ProvaelError(
        "config/invalid",
        `actions.select names column ${s} of a ${dim}-column reply`,
      );
  }
  return {
    name,
    images,
    state,
    prompt:
      file.prompt === undefined ? base.prompt : file.prompt === null ? null : asPath(file.prompt),
    context:
      file.context === undefined
        ? base.context
        : file.context === null
          ? null
          : asPath(file.context),
    constants: file.constants ? (fromJson(file.constants) as WireMap) : base.constants,
    actions: {
      key: a?.key ?? base.actions.key,
      dim,
      select,
      scale: a?.scale ?? (a ? new Array(OUR_DIM).fill(1) : base.actions.scale),
      offset: a?.offset ?? (a ? new Array(OUR_DIM).fill(0) : base.actions.offset),
    },
    episodeKeys: file.episode_keys ?? base.episodeKeys,
    replan: file.replan ?? base.replan,
  };
}

/**
 * A preset name or a path to a YAML/JSON mapping file.
 *
 * @example
 *   resolveLayout("libero");
 *   resolveLayout("./my-policy.layout.yaml");
 */
export function resolveLayout(nameOrPath: string): Layout {
  const preset = LAYOUTS[nameOrPath.toLowerCase()];
  if (preset) return preset;
  if (!/\.(ya?ml|json)$/i.test(nameOrPath)) {
    throw new ProvaelError("config/invalid", `unknown layout '${nameOrPath}'`, {
      details: { layout: nameOrPath },
      hint: `use one of ${Object.keys(LAYOUTS).join(", ")} or a .yaml/.json mapping file`,
    });
  }
  let text: string;
  try {
    text = readFileSync(nameOrPath, "utf8");
  } catch (e) {
    throw new ProvaelError("io/read", `cannot read layout file ${nameOrPath}`, { cause: e });
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    throw new ProvaelError("io/malformed", `layout file ${nameOrPath} is not YAML or JSON`, {
      cause: e,
    });
  }
  const parsed = layoutFileSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ProvaelError(
      "config/invalid",
      `layout file ${nameOrPath}: ${describeIssues(parsed.error)}`,
      {
        details: { issues: parsed.error.issues },
        hint: "see docs/served-policies.md for the mapping file format",
      },
    );
  }
  return layoutFromFile(parsed.data, nameOrPath);
}

/** Cameras a layout sends (in order, once each). */
export function layoutCameras(layout: Layout): string[] {
  return [...new Set(layout.images.map((i) => i.camera))];
}

// ---------------------------------------------------------------------------------------------
// Client side: Observation -> request, reply -> actions

export interface EpisodeTag {
  id: string;
  episode: EpisodeInfo;
}

function imageArray(spec: ImageSpec, image: Image): NdArray {
  const [w, h] = spec.size ?? [image.width, image.height];
  const im = transform(image, w, h, spec.resize, spec.rotate180 ? "after" : "none");
  return spec.format === "CHW"
    ? uint8Array(toChw(im), [im.channels, im.height, im.width])
    : uint8Array(im.data, [im.height, im.width, im.channels]);
}

/**
 * The request map for one observation. `passEncoded`: the server reads `__image__` PNG
 * (vla-eval), so a camera that arrived encoded and whose pixels nobody read is sent as the bytes
 * it came in as, when the layout sends it unchanged (native size, unrotated, HWC).
 */
export function encodeObservation(
  layout: Layout,
  obs: Observation,
  tag?: EpisodeTag,
  passEncoded = false,
): WireMap {
  const out = wireMap();
  for (const [k, v] of Object.entries(layout.constants)) out[k] = v;
  for (const spec of layout.images) {
    const source =
      passEncoded && spec.size === null && !spec.rotate180 && spec.format === "HWC"
        ? forwardEncoded(obs.images, spec.camera)
        : undefined;
    if (source instanceof EncodedImage) {
      setPath(out, spec.key, source);
      continue;
    }
    const image = obs.images[spec.camera];
    if (image) setPath(out, spec.key, imageArray(spec, image));
    else if (spec.missing === "error") {
      throw new ProvaelError("policy/error", `the suite has no '${spec.camera}' camera`, {
        hint: `the layout '${layout.name}' needs it; pass --layout with a mapping file`,
      });
    } else if (spec.missing === "zeros" && spec.size) {
      // Zeros look the same in any layout or rotation: skip the transforms.
      const [w, h] = spec.size;
      const shape = spec.format === "CHW" ? [3, h, w] : [h, w, 3];
      setPath(out, spec.key, uint8Array(blank(w, h).data, shape));
    }
  }
  for (const s of layout.state) {
    const picked =
      s.indices === "all" ? Array.from(obs.state) : s.indices.map((i) => obs.state[i] ?? 0);
    const values =
      s.pad !== null && picked.length < s.pad
        ? [...picked, ...new Array(s.pad - picked.length).fill(0)]
        : picked;
    const shape = s.scalar ? [] : [values.length];
    setPath(
      out,
      s.key,
      s.dtype === "float64" ? float64Array(values, shape) : float32Array(values, shape),
    );
  }
  if (layout.prompt) setPath(out, layout.prompt, obs.instruction);
  if (layout.context && obs.context && obs.context.length > 0)
    setPath(out, layout.context, [...obs.context]);
  if (layout.episodeKeys && tag) {
    const e = wireMap();
    e.id = tag.id;
    e.task = tag.episode.task;
    e.seed = tag.episode.seed;
    e.policy_seed = tag.episode.policySeed;
    out[EPISODE_KEY] = e;
  }
  return out;
}

/** Most actions we accept in one chunk. */
const MAX_CHUNK = 10_000;

/**
 * Our actions from a reply's action array: (H, D) float, D as the layout says; a 1-D (D,) array
 * counts as one action when `allow1d` (vla-eval sends single steps).
 */
export function decodeActions(
  layout: Layout,
  value: WireValue | undefined,
  allow1d = false,
): Action[] {
  const what = `reply '${layout.actions.key}'`;
  const a = asNdArray(value, what);
  expectFloat(a, what);
  const d = layout.actions.dim;
  const shape = a.shape.length === 1 && allow1d ? [1, a.shape[0] ?? 0] : a.shape;
  if (shape.length !== 2 || shape[1] !== d || (shape[0] ?? 0) < 1 || (shape[0] ?? 0) > MAX_CHUNK) {
    throw new ProvaelError(
      "policy/protocol",
      `${what} must have shape (H, ${d}) with 1 <= H <= ${MAX_CHUNK}, got (${a.shape.join(", ")})`,
      {
        details: { shape: a.shape, expected: [null, d] },
        hint: `the layout '${layout.name}' expects ${d}-column actions; pick the layout matching the server's checkpoint`,
      },
    );
  }
  const flat = toFloat64(a);
  const h = shape[0] as number;
  const out: Action[] = [];
  for (let r = 0; r < h; r++) {
    const act = new Float32Array(OUR_DIM);
    for (let i = 0; i < OUR_DIM; i++) {
      const col = layout.actions.select[i];
      const v = col === null || col === undefined ? 0 : (flat[r * d + col] as number);
      act[i] = v * (layout.actions.scale[i] ?? 1) + (layout.actions.offset[i] ?? 0);
    }
    if (!act.every(Number.isFinite))
      throw new ProvaelError("policy/protocol", `${what} row ${r} holds a non-finite value`);
    out.push(act);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Server side: request -> Observation, actions -> reply

export interface DecodeOptions {
  /** [width, height] the served policy reads; null keeps what arrived. */
  imageSize: [number, number] | null;
  /** Cameras to decode (the served policy's); others are ignored. */
  cameras: readonly string[] | null;
}

function readImage(spec: ImageSpec, v: WireValue | undefined, opts: DecodeOptions): Image {
  const what = `'${spec.key.join(".")}'`;
  const a = asNdArray(v, what);
  const data = toUint8(a, what);
  if (a.shape.length !== 3)
    throw new ProvaelError("policy/protocol", `${what} must be a 3-D image, got ${describe(a)}`);
  const [d0, d1, d2] = a.shape as [number, number, number];
  // Like openpi, a first dimension of 3 means CHW whatever the layout says.
  const im: Image =
    spec.format === "CHW" || (d0 === 3 && d2 !== 3)
      ? fromChw(data, d0, d1, d2)
      : { width: d1, height: d0, channels: d2, data: new Uint8Array(data) };
  // Only a layout that resized on the way out resizes back; native-size images stay as sent.
  const [w, h] = opts.imageSize && spec.size ? opts.imageSize : [im.width, im.height];
  return transform(im, w, h, spec.resize, spec.rotate180 ? "before" : "none");
}

function readNumbers(v: WireValue | undefined, what: string): number[] {
  if (typeof v === "number") return [v];
  if (Array.isArray(v) && v.every((x) => typeof x === "number")) return v as number[];
  const a = asNdArray(v, what);
  expectFloat(a, what);
  return Array.from(toFloat64(a));
}

/** What a server reads from one request: the observation and the episode it belongs to. */
export function decodeObservation(
  layout: Layout,
  req: WireMap,
  opts: DecodeOptions,
): { obs: Observation; episode: { id: string; info: EpisodeInfo } | null } {
  const images: Record<string, Image> = {};
  for (const spec of layout.images) {
    if (opts.cameras && !opts.cameras.includes(spec.camera)) continue;
    const v = getPath(req, spec.key);
    if (v === undefined) {
      if (spec.missing === "error")
        throw new ProvaelError("policy/protocol", `missing key '${spec.key.join(".")}'`);
      continue;
    }
    images[spec.camera] = readImage(spec, v, opts);
  }
  let state: number[] = [];
  for (const s of layout.state) {
    const v = getPath(req, s.key);
    if (v === undefined)
      throw new ProvaelError("policy/protocol", `missing key '${s.key.join(".")}'`);
    const values = readNumbers(v, `'${s.key.join(".")}'`);
    if (s.indices === "all") state = values;
    else
      s.indices.forEach((idx, j) => {
        while (state.length <= idx) state.push(0);
        state[idx] = values[j] ?? 0;
      });
  }
  const prompt = layout.prompt ? getPath(req, layout.prompt) : undefined;
  const obs: Observation = {
    images,
    state: Float32Array.from(state),
    instruction: prompt === undefined ? "" : asString(prompt, `'${layout.prompt?.join(".")}'`),
  };
  const ctx = layout.context ? getPath(req, layout.context) : undefined;
  if (Array.isArray(ctx)) obs.context = ctx.map((c, i) => asString(c, `context[${i}]`));
  const ep = getPath(req, [EPISODE_KEY]);
  let episode: { id: string; info: EpisodeInfo } | null = null;
  if (isWireMap(ep)) episode = readEpisode(ep);
  return { obs, episode };
}

/** Reads `{id, task, seed, policy_seed}` (the `provael/episode` value or a vla-eval task). */
export function readEpisode(ep: WireMap): { id: string; info: EpisodeInfo } {
  const m = asMap(ep, EPISODE_KEY);
  const num = (k: string) => {
    const v = m[k];
    return typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : 0;
  };
  return {
    id: typeof m.id === "string" ? m.id : "",
    info: {
      task: typeof m.task === "string" ? m.task : "",
      seed: num("seed"),
      policySeed: num("policy_seed"),
    },
  };
}

/** The reply array for our actions: (H, D) float32, columns placed as the layout selects. */
export function encodeActions(layout: Layout, acts: readonly Action[]): NdArray {
  const d = layout.actions.dim;
  const flat = new Float32Array(acts.length * d);
  acts.forEach((a, r) => {
    for (let i = 0; i < OUR_DIM; i++) {
      const col = layout.actions.select[i];
      if (col === null || col === undefined) continue;
      const scale = layout.actions.scale[i] ?? 1;
      flat[r * d + col] =
        ((a[i] ?? 0) - (layout.actions.offset[i] ?? 0)) / (scale === 0 ? 1 : scale);
    }
  });
  return float32Array(flat, [acts.length, d]);
}
