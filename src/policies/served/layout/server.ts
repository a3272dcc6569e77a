/**
 * The server side of a layout, the client's run backwards: a request becomes an Observation and
 * actions become a reply, so a policy served by `provael serve-policy` sees what it would see
 * in-process.
 */
import { ProvaelError } from "../../../core/errors.js";
import type { Action, EpisodeInfo, Image, Observation } from "../../../core/types.js";
import { expectFloat, float32Array, type NdArray, toFloat64, toUint8 } from "../codec/ndarray.js";
import {
  asMap,
  asNdArray,
  asString,
  describe,
  getPath,
  isWireMap,
  type WireMap,
  type WireValue,
} from "../codec/tree.js";
import { fromChw, transform } from "../image.js";
import { EPISODE_KEY, type ImageSpec, type Layout, OUR_DIM } from "./presets.js";

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
