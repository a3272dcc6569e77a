/**
 * A benchmark's decoded OBSERVATION payload (PROTOCOLS.md §4.4-4.5) → what the policy sees and
 * what the predicates judge. Frames are decoded by the served-policy codec (codec/vla-eval.ts);
 * this module only reads the decoded tree as the benchmark profile says.
 */
import { sha256Stream } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import { lazyImages } from "../core/lazy-images.js";
import type { Image, Observation, SimState } from "../core/types.js";
import { NdArray, toFloat64, toUint8 } from "../policies/served/codec/ndarray.js";
import {
  describe,
  isWireMap,
  type WireMap,
  type WireValue,
} from "../policies/served/codec/tree.js";
import { EncodedImage } from "../policies/served/codec/vla-eval.js";
import { rotate180 } from "../policies/served/image.js";
import {
  type BenchmarkProfile,
  policyCamera,
  profileImageKeys,
  profilePoseKey,
  profileState,
} from "./profile.js";

function bad(message: string): ProvaelError {
  return new ProvaelError("policy/protocol", `observation: ${message}`, {
    hint: "the benchmark's observation does not match the profile; check --profile",
  });
}

/**
 * What the profile promises every observation carries: its first (primary) image key, and (a
 * profile with a pose) the pose's vector long enough for the pose slice. An observation without them (an empty payload,
 * a benchmark that ignored the HELLO reply's `send_state`) is refused, never forwarded: a
 * policy would act on nothing, and every step would be unjudged for want of a pose.
 */
function missingPromised(profile: BenchmarkProfile, payload: WireMap): string | null {
  const images = payload.images;
  const sent = isWireMap(images) ? Object.keys(images) : [];
  // `images.keys: ["*"]` promises some camera, whatever its name.
  const primary = profileImageKeys(profile, sent)[0];
  if (primary === undefined || !sent.includes(primary))
    return profile.images.keys[0] === "*"
      ? "an image under 'images'"
      : `images.${primary} (the primary camera)`;
  // A profile without a pose promises none (its keep-out predicates are N/A, never judged).
  const p = profile.pose;
  if (p === undefined) return null;
  const held = payload[p.key];
  const where = p.field === undefined ? `'${p.key}'` : `'${p.key}' → '${p.field}'`;
  const pose = numbers(p.field === undefined ? held : isWireMap(held) ? held[p.field] : undefined);
  if (pose === null || pose.length < p.slice[1])
    return `${where} with at least ${p.slice[1]} numbers (the end-effector pose at [${p.slice.join(", ")}))`;
  return null;
}

/** A numeric vector from an ndarray, a list of numbers or one number; null when absent. */
export function numbers(v: WireValue | undefined): number[] | null {
  if (v === undefined || v === null) return null;
  if (typeof v === "number") return [v];
  if (Array.isArray(v) && v.every((x) => typeof x === "number")) return v as number[];
  if (v instanceof NdArray) {
    if (!/[fiu]\d+$/.test(v.dtype)) return null;
    return Array.from(toFloat64(v));
  }
  return null;
}

function flipImage(img: Image, flip: BenchmarkProfile["images"]["flip"]): Image {
  if (flip === "none") return img;
  if (flip === "both") return rotate180(img);
  const { width: w, height: h, channels: c } = img;
  const out = new Uint8Array(img.data.length);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const sy = flip === "vertical" ? h - 1 - y : y;
      const sx = flip === "horizontal" ? w - 1 - x : x;
      out.set(img.data.subarray((sy * w + sx) * c, (sy * w + sx + 1) * c), (y * w + x) * c);
    }
  }
  return { ...img, data: out };
}

/** One image's shape from the decoded tree (HWC uint8; PNG, JPEG and raw all decode to one). */
function imageShape(
  v: WireValue,
  key: string,
): { width: number; height: number; channels: number } {
  if (!(v instanceof NdArray)) throw bad(`images.${key} is ${describe(v)}, not an image`);
  const [h, w, c] = v.shape as [number, number, number];
  if (v.shape.length !== 3 || ![1, 3, 4].includes(c))
    throw bad(`images.${key} has shape [${v.shape.join(", ")}], not HWC with 1, 3 or 4 channels`);
  return { width: w, height: h, channels: c };
}

/** One image's pixels (decoding a deferred PNG now). */
function readImage(v: NdArray, key: string): Image {
  return { ...imageShape(v, key), data: toUint8(v, `images.${key}`) };
}

export interface DecodedObservation {
  /**
   * What the policy sees before the arm acts (cameras under the policy's names). Cameras are
   * decoded when first read: one that arrived as PNG and that nobody reads (an arm that
   * leaves the images alone, a vla-eval upstream) is forwarded as the benchmark's bytes.
   */
  obs: Observation;
  /** SHA-256 of the observation as decoded (images by key, then the state); decodes the images. */
  digest(): string;
}

/**
 * The policy's observation from a decoded payload: images under `images` by the profile's keys
 * (renamed and turned as it says), `states` as the state vector, `task_description` as the
 * instruction. The extras key never reaches the policy.
 */
export function readObservation(profile: BenchmarkProfile, payload: WireMap): DecodedObservation {
  const raw = payload.images;
  if (raw !== undefined && !isWireMap(raw)) throw bad(`'images' is ${describe(raw)}, not a map`);
  const missing = missingPromised(profile, payload);
  if (missing !== null) {
    throw new ProvaelError(
      "policy/protocol",
      `observation: lacks ${missing}, which profile '${profile.id}' promises; not forwarded`,
      {
        details: { profile: profile.id, keys: Object.keys(payload).sort() },
        hint: `the bridge asks for it in its HELLO reply (observation_params ${JSON.stringify(profile.observationParams)}); check that the benchmark is '${profile.benchmark}' and that its config does not turn it off`,
      },
    );
  }
  // By the benchmark's key, in the profile's order (the digest's order).
  const arrays = new Map<string, NdArray>();
  const byCamera = new Map<string, string>();
  const sources: Record<string, EncodedImage> = {};
  for (const key of profileImageKeys(profile, raw === undefined ? [] : Object.keys(raw))) {
    const v = raw?.[key];
    if (v === undefined) continue;
    imageShape(v, key);
    const a = v as NdArray;
    const camera = policyCamera(profile, key);
    arrays.set(key, a);
    byCamera.set(camera, key);
    // Bytes that are what the policy would see (no flip) can travel on undecoded.
    if (a instanceof EncodedImage && profile.images.flip === "none") sources[camera] = a;
  }
  const images = lazyImages(
    [...byCamera.keys()],
    (camera) => {
      const key = byCamera.get(camera) as string;
      return flipImage(readImage(arrays.get(key) as NdArray, key), profile.images.flip);
    },
    () => true,
    sources,
  );
  const stateValue = payload.states;
  const state = numbers(stateValue);
  if (stateValue !== undefined && state === null)
    throw bad(`'states' is ${describe(stateValue)}, not a numeric vector`);
  const f64 = Float64Array.from(state ?? []);
  const instruction = payload.task_description;
  if (instruction !== undefined && typeof instruction !== "string")
    throw bad(`'task_description' is ${describe(instruction)}, not a str`);
  return {
    obs: { images, state: Float32Array.from(f64), instruction: instruction ?? "" },
    digest() {
      const h = sha256Stream();
      for (const [key, a] of arrays) {
        // The pixels as they arrived (before any flip), read from the array itself so that the
        // camera still counts as unread and can travel on as its bytes.
        const img = readImage(a, key);
        h.update(`m:${key}:${img.width}x${img.height}x${img.channels}\u0000`);
        h.update(img.data);
      }
      h.update("s:");
      h.update(new Uint8Array(f64.buffer));
      return h.digest();
    },
  };
}

/** The decoded tree as plain values: numeric arrays become Float64Arrays, maps plain objects. */
function plain(v: WireValue | undefined): unknown {
  if (v instanceof NdArray) return /[fiu]\d+$/.test(v.dtype) ? toFloat64(v) : undefined;
  if (Array.isArray(v)) return v.map(plain);
  if (isWireMap(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = plain(x);
    return out;
  }
  return typeof v === "bigint" ? Number(v) : v;
}

/**
 * The state the predicates judge, from a decoded observation payload (or EPISODE_END's final
 * state): the end-effector pose from `states` as the profile slices it, contacts and object
 * poses from the profile's extras key (profile.ts `profileState`). Whatever is missing stays
 * missing, so a predicate that needs it reports the step unjudged, never safe.
 *
 * @example
 *   judgeState(loadProfile("tabletop"), { states: [0.1, 0.2, 0.9, 0, 0, 0, 0, 0] }).eefPos;
 *   // [0.1, 0.2, 0.9]
 */
export function judgeState(profile: BenchmarkProfile, payload: WireMap): SimState {
  const p: Record<string, unknown> = {};
  const key = profilePoseKey(profile);
  if (key !== undefined) p[key] = plain(payload[key]);
  if (profile.extrasKey !== undefined) p[profile.extrasKey] = plain(payload[profile.extrasKey]);
  return profileState(profile, p);
}
