/** The client side of a layout: an Observation becomes a request, a reply becomes our actions. */
import { ProvaelError } from "../../../core/errors.js";
import { forwardEncoded } from "../../../core/lazy-images.js";
import type { Action, EpisodeInfo, Image, Observation } from "../../../core/types.js";
import {
  expectFloat,
  float32Array,
  float64Array,
  type NdArray,
  toFloat64,
  uint8Array,
} from "../codec/ndarray.js";
import { asNdArray, setPath, type WireMap, type WireValue, wireMap } from "../codec/tree.js";
import { EncodedImage } from "../codec/vla-eval.js";
import { blank, toChw, transform } from "../image.js";
import { EPISODE_KEY, type ImageSpec, type Layout, OUR_DIM } from "./presets.js";

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
