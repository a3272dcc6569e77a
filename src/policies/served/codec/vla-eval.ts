/**
 * vla-evaluation-harness frames (PROTOCOLS.md §4): a msgpack envelope
 * `{type, payload, seq, timestamp}` with str keys; arrays are str-keyed `__ndarray__` maps
 * (dtype kinds b, i, u, f only) and HWC uint8 images travel in `__image__` maps: PNG by default,
 * JPEG (RGB) or raw when the sender chose so; all three are decoded.
 */
import { ProvaelError } from "../../../core/errors.js";
import { decodeJpeg as decodeImageJpeg, jpegHeader } from "../../../core/jpeg.js";
import {
  decodePng as decodeImagePng,
  encodePng as encodeImagePng,
  pngHeader,
} from "../../../core/png.js";
import { DEFAULT_DECODE_LIMITS, DecodeBudget, type DecodeLimits } from "./limits.js";
import {
  decodeMsgpack,
  type Encodable,
  encodeMsgpack,
  MsgFloat,
  MsgMap,
  type MsgValue,
} from "./msgpack.js";
import { NdArray, parseDtype, uint8Array, validateNdArray } from "./ndarray.js";
import { isWireMap, type WireMap, type WireValue, wireMap } from "./tree.js";

/** The protocol version our client, model server and bridge speak and expect in HELLO. */
export const VLA_EVAL_PROTOCOL_VERSION = 1;

/** The 7-D action spec of our suites (and LIBERO's), in vla-eval's vocabulary. */
export function actionSpec7(): WireMap {
  return {
    position: { name: "position", dims: 3, format: "delta_xyz", range: [-1, 1] },
    rotation: { name: "rotation", dims: 3, format: "delta_rpy", range: [-1, 1] },
    gripper: {
      name: "gripper",
      dims: 1,
      format: "binary_close_positive",
      range: [-1, 1],
      description: "-1 open, +1 close",
    },
  } as unknown as WireMap;
}

export const VLA_EVAL_TYPES = [
  "hello",
  "observation",
  "action",
  "episode_start",
  "episode_end",
  "error",
] as const;
export type VlaEvalType = (typeof VLA_EVAL_TYPES)[number];

export interface Envelope {
  type: VlaEvalType;
  payload: WireMap;
  seq: number;
  /** Unix seconds at creation. */
  timestamp: number;
}

/** Largest image we decode (pixels), so a PNG header cannot make us allocate gigabytes. */
const MAX_PIXELS = 4096 * 4096;

function malformed(message: string): ProvaelError {
  return new ProvaelError("policy/protocol", `malformed vla-eval frame: ${message}`, {
    hint: "the peer does not speak the vla-evaluation-harness protocol (version 1)",
  });
}

/** Whether upstream would send this array through the image codec (HWC uint8, 1/3/4 channels). */
function isImage(a: NdArray): boolean {
  const c = a.shape[2];
  return a.dtype.endsWith("u1") && a.shape.length === 3 && (c === 1 || c === 3 || c === 4);
}

/**
 * PNG bytes of an HWC uint8 image with 1, 3 or 4 channels.
 *
 * @example
 *   encodePng(new Uint8Array(2 * 2 * 3), 2, 2, 3);
 */
export function encodePng(
  data: Uint8Array,
  width: number,
  height: number,
  channels: number,
): Buffer {
  return encodeImagePng({ width, height, channels, data });
}

/**
 * What decoding a PNG of h x w pixels into c channels allocates: pngjs's inflated scanlines and
 * RGBA bitmap, then our HWC copy. A 50 KB PNG can declare 4096x4096 pixels, so this is charged
 * against the frame's budget before a byte is inflated.
 */
export function pngDecodeCost(h: number, w: number, c: number): number {
  // Scanlines at the worst case of 8 bytes a pixel (16-bit RGBA) plus a filter byte a row.
  return (w * 8 + 1) * h + w * h * 4 + w * h * c;
}

/** Checks a PNG's declared size against `shape` and charges what decoding it will allocate. */
function checkPng(bytes: Uint8Array, shape: readonly number[], budget?: DecodeBudget): void {
  const [h, w, c] = shape;
  if (shape.length !== 3 || !h || !w || !c || ![1, 3, 4].includes(c))
    throw malformed(`image shape [${shape.join(", ")}] is not HWC with 1, 3 or 4 channels`);
  if (h * w > MAX_PIXELS) throw malformed(`image of ${w}x${h} is larger than ${MAX_PIXELS} pixels`);
  const header = pngHeader(bytes);
  if (!header) throw malformed("image data is not a PNG");
  if (header.width !== w || header.height !== h)
    throw malformed(`PNG is ${header.width}x${header.height}, the shape says ${w}x${h}`);
  // pngjs bounds the inflated size of non-interlaced images only; an interlaced one could inflate
  // without limit (a zlib bomb), and no upstream encoder writes them.
  if (header.interlaced) throw malformed("interlaced PNGs are not accepted");
  budget?.take(0, pngDecodeCost(h, w, c));
}

/** Decodes checked PNG bytes (checkPng) into HWC uint8 with shape[2] channels. */
function inflatePng(bytes: Uint8Array, shape: readonly number[]): Uint8Array {
  try {
    return decodeImagePng(bytes, shape[2]).data;
  } catch (e) {
    throw malformed(`undecodable PNG (${(e as Error).message})`);
  }
}

/**
 * Decodes PNG bytes into HWC uint8 with `channels` channels, checking the declared size first
 * (and, given a budget, charging what decoding will allocate before inflating anything).
 */
export function decodePng(
  bytes: Uint8Array,
  shape: readonly number[],
  budget?: DecodeBudget,
): Uint8Array {
  checkPng(bytes, shape, budget);
  return inflatePng(bytes, shape);
}

/**
 * What decoding a JPEG of h x w pixels allocates: jpeg-js's per-component sample buffers (up to
 * three planes, each padded to whole blocks, counted at twice the plane) and its RGB output.
 */
export function jpegDecodeCost(h: number, w: number): number {
  return 3 * 2 * w * h + 3 * w * h;
}

/** Checks a JPEG's declared size against `shape` and charges what decoding it will allocate. */
function checkJpeg(bytes: Uint8Array, shape: readonly number[], budget?: DecodeBudget): void {
  const [h, w, c] = shape;
  if (shape.length !== 3 || !h || !w || c !== 3)
    throw malformed(`jpeg image shape [${shape.join(", ")}] is not HWC with 3 channels`);
  if (h * w > MAX_PIXELS) throw malformed(`image of ${w}x${h} is larger than ${MAX_PIXELS} pixels`);
  const header = jpegHeader(bytes);
  if (!header) throw malformed("image data is not a JPEG");
  if (header.width !== w || header.height !== h)
    throw malformed(`JPEG is ${header.width}x${header.height}, the shape says ${w}x${h}`);
  budget?.take(0, jpegDecodeCost(h, w));
}

/** Decodes checked JPEG bytes (checkJpeg) into HWC uint8 RGB. */
function inflateJpeg(bytes: Uint8Array, shape: readonly number[]): Uint8Array {
  try {
    return decodeImageJpeg(bytes, (shape[0] as number) * (shape[1] as number)).data;
  } catch (e) {
    throw malformed(`undecodable JPEG (${(e as Error).message})`);
  }
}

/**
 * Decodes JPEG bytes into HWC uint8 RGB, checking the declared size against `shape` first (and,
 * given a budget, charging what decoding will allocate before any scan is decoded).
 */
export function decodeJpeg(
  bytes: Uint8Array,
  shape: readonly number[],
  budget?: DecodeBudget,
): Uint8Array {
  checkJpeg(bytes, shape, budget);
  return inflateJpeg(bytes, shape);
}

/**
 * A PNG (or JPEG) `__image__` kept as its bytes (a bridge that forwards what the benchmark sent):
 * an HWC uint8 array whose pixels are decoded on first read of `data`, and which encodes back as
 * the same `__image__` bytes it came in as. Header and size are checked, and the decode charged,
 * when the frame is read; only the inflating waits.
 */
export class EncodedImage extends NdArray {
  declare readonly data: Uint8Array;

  constructor(
    readonly format: "png" | "jpeg",
    readonly bytes: Uint8Array,
    shape: readonly number[],
  ) {
    super("|u1", shape, new Uint8Array(0));
    let pixels: Uint8Array | null = null;
    // `data` is a field of NdArray: replaced by a getter on the instance, so every reader of an
    // NdArray (a codec, a layout, the bridge) gets the pixels without knowing they were deferred.
    Object.defineProperty(this, "data", {
      enumerable: true,
      get: (): Uint8Array => {
        pixels ??= format === "png" ? inflatePng(bytes, shape) : inflateJpeg(bytes, shape);
        return pixels;
      },
    });
  }

  get height(): number {
    return this.shape[0] as number;
  }

  get width(): number {
    return this.shape[1] as number;
  }

  get channels(): number {
    return this.shape[2] as number;
  }
}

/** How images travel: PNG (what vla-eval benchmarks send) or raw bytes (no encoding cost). */
export type ImageFormat = "png" | "raw";

function toEncodable(v: WireValue, images: ImageFormat): Encodable {
  if (v instanceof EncodedImage)
    return { __image__: true, format: v.format, data: v.bytes, shape: [...v.shape] };
  if (v instanceof NdArray) {
    validateNdArray(v);
    if (isImage(v)) {
      const [h, w, c] = v.shape as [number, number, number];
      if (images === "raw")
        return { __image__: true, format: "raw", data: v.data, dtype: "|u1", shape: [h, w, c] };
      return { __image__: true, format: "png", data: encodePng(v.data, w, h, c), shape: [h, w, c] };
    }
    return { __ndarray__: true, data: v.data, dtype: v.dtype, shape: [...v.shape] };
  }
  if (Array.isArray(v)) return v.map((x) => toEncodable(x, images));
  if (isWireMap(v)) {
    const m = new Map<string, Encodable>();
    for (const [k, x] of Object.entries(v)) m.set(k, toEncodable(x, images));
    return m;
  }
  return v;
}

/** Encodes one envelope; `timestamp` is written as float64 like Python's `time.time()`. */
export function encodeEnvelope(e: Envelope, images: ImageFormat = "png"): Uint8Array {
  return encodeMsgpack(
    new Map<string, Encodable>([
      ["type", e.type],
      ["payload", toEncodable(e.payload, images)],
      ["seq", e.seq],
      ["timestamp", new MsgFloat(e.timestamp)],
    ]),
  );
}

/** What decoding reads: `deferImages` keeps PNG images as their bytes (EncodedImage). */
export interface DecodeOptions {
  deferImages?: boolean;
}

/** What decoding reads: `deferImages` keeps PNG images as their bytes (EncodedImage). */
export interface DecodeOptions {
  deferImages?: boolean;
}

function fromMsg(v: MsgValue, budget: DecodeBudget, o: DecodeOptions): WireValue {
  if (Array.isArray(v)) return v.map((x) => fromMsg(x, budget, o));
  if (!(v instanceof MsgMap)) return v;
  if (v.get("__ndarray__") !== undefined) {
    const data = v.get("data");
    const dtype = v.get("dtype");
    const shape = v.get("shape");
    if (!(data instanceof Uint8Array)) throw malformed("array 'data' is not bin");
    if (typeof dtype !== "string") throw malformed("array 'dtype' is not a str");
    if (!Array.isArray(shape) || !shape.every((d) => typeof d === "number"))
      throw malformed("array 'shape' is not a list of ints");
    parseDtype(dtype);
    const a = new NdArray(dtype, shape as number[], data);
    validateNdArray(a);
    return a;
  }
  if (v.get("__image__") !== undefined) {
    const format = v.get("format");
    const data = v.get("data");
    const shape = v.get("shape");
    if (!(data instanceof Uint8Array)) throw malformed("image 'data' is not bin");
    if (!Array.isArray(shape) || !shape.every((d) => typeof d === "number"))
      throw malformed("image 'shape' is not a list of ints");
    // PNG only: it is lossless, so every decoder gives the same pixels. Two JPEG decoders may
    // differ by a level here and there, and the arms of a pair must see the same pixels.
    if (o.deferImages && format === "png") {
      checkPng(data, shape as number[], budget);
      return new EncodedImage(format, data, shape as number[]);
    }
    if (format === "png")
      return uint8Array(decodePng(data, shape as number[], budget), shape as number[]);
    if (format === "jpeg")
      return uint8Array(decodeJpeg(data, shape as number[], budget), shape as number[]);
    if (format === "raw") {
      const dtype = v.get("dtype");
      if (typeof dtype !== "string") throw malformed("raw image 'dtype' is not a str");
      const a = new NdArray(dtype, shape as number[], data);
      validateNdArray(a);
      return a;
    }
    throw malformed(
      `image format ${JSON.stringify(format)} is not supported (png, jpeg and raw are)`,
    );
  }
  const out = wireMap();
  for (const [k, x] of v.entries) {
    if (typeof k !== "string") throw malformed("a map key is not a str");
    out[k] = fromMsg(x, budget, o);
  }
  return out;
}

/**
 * Decodes and checks one envelope: all four keys present and typed. Everything it builds, PNGs
 * decoded included, is paid from one budget under `limits` (limits.ts).
 */
export function decodeEnvelope(
  bytes: Uint8Array,
  limits: DecodeLimits = DEFAULT_DECODE_LIMITS,
  options: DecodeOptions = {},
): Envelope {
  const budget = new DecodeBudget(limits, "vla-eval frame");
  const top = decodeMsgpack(bytes, budget);
  if (!(top instanceof MsgMap)) throw malformed("the frame is not a map");
  const type = top.get("type");
  const payload = top.get("payload");
  const seq = top.get("seq");
  const timestamp = top.get("timestamp");
  if (typeof type !== "string" || !(VLA_EVAL_TYPES as readonly string[]).includes(type))
    throw malformed(`unknown message type ${JSON.stringify(type)}`);
  if (!(payload instanceof MsgMap)) throw malformed("'payload' is not a map");
  if (typeof seq !== "number" || !Number.isInteger(seq)) throw malformed("'seq' is not an int");
  if (typeof timestamp !== "number") throw malformed("'timestamp' is not a number");
  return {
    type: type as VlaEvalType,
    payload: fromMsg(payload, budget, options) as WireMap,
    seq,
    timestamp,
  };
}
