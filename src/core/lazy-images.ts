/**
 * Camera images rendered on first read. A ray-cast frame costs far more than a physics tick,
 * and a policy that executes action chunks reads its cameras only when it replans: rendering on
 * demand makes those steps nearly free without changing a single pixel the policy sees.
 *
 * Each camera is an enumerable getter that renders once and caches. Reading one after the
 * simulator has moved on is a bug (the frame would show a later state), so it throws.
 *
 * @example
 *   const images = lazyImages(["agentview"], (cam) => world.renderCamera(cam), () => world.version === v);
 *   isRendered(images, "agentview"); // false until someone reads images.agentview
 */
import { ProvaelError } from "./errors.js";
import type { Image } from "./types.js";

const RENDERED = Symbol("provael.rendered");
const SOURCES = Symbol("provael.encoded-sources");
const FORWARDED = Symbol("provael.forwarded");
const SHAPES = Symbol("provael.shapes");

/** An image's size and channel count, known before its pixels are. */
export interface ImageShape {
  readonly width: number;
  readonly height: number;
  readonly channels: number;
}

/**
 * A camera image still in the encoding it arrived in (a benchmark's PNG). A client whose
 * server accepts that encoding forwards these bytes while nobody has read the pixels, so a
 * bridge that leaves the cameras alone neither decodes nor re-encodes them.
 */
export interface EncodedSource {
  readonly format: string;
  readonly bytes: Uint8Array;
  readonly width: number;
  readonly height: number;
  readonly channels: number;
}

type LazyRecord = Record<string, Image> & {
  [RENDERED]?: Set<string>;
  [SOURCES]?: Readonly<Record<string, EncodedSource>>;
  [FORWARDED]?: Set<string>;
  [SHAPES]?: Readonly<Record<string, ImageShape>>;
};

/**
 * `shapes` declares what each camera will render to (a simulator knows its render settings), so
 * an attack can place a patch without rendering the frame; a render that disagrees throws.
 */

export function lazyImages(
  cameras: readonly string[],
  render: (camera: string) => Image,
  current: () => boolean,
  sources?: Readonly<Record<string, EncodedSource>>,
  shapes?: Readonly<Record<string, ImageShape>>,
): Record<string, Image> {
  const out: LazyRecord = {};
  const rendered = new Set<string>();
  Object.defineProperty(out, RENDERED, { value: rendered, enumerable: false });
  if (shapes) Object.defineProperty(out, SHAPES, { value: shapes, enumerable: false });
  if (sources) {
    Object.defineProperty(out, SOURCES, { value: sources, enumerable: false });
    Object.defineProperty(out, FORWARDED, { value: new Set<string>(), enumerable: false });
  }
  for (const camera of cameras) {
    let cached: Image | undefined;
    Object.defineProperty(out, camera, {
      enumerable: true,
      configurable: true,
      get(): Image {
        if (cached) return cached;
        if (!current()) {
          throw new ProvaelError(
            "internal/invariant",
            `camera '${camera}' was read after the simulator stepped past its observation`,
            { hint: "read observation images during the step that produced them" },
          );
        }
        const image = render(camera);
        const shape = shapes?.[camera];
        if (
          shape &&
          (image.width !== shape.width ||
            image.height !== shape.height ||
            image.channels !== shape.channels)
        ) {
          throw new ProvaelError(
            "internal/invariant",
            `camera '${camera}' rendered ${image.width}x${image.height}x${image.channels}, not the declared ${shape.width}x${shape.height}x${shape.channels}`,
            { hint: "declare the shape the camera renders to" },
          );
        }
        cached = image;
        rendered.add(camera);
        return cached;
      },
    });
  }
  return out;
}

/** Whether a camera's image exists already (always true for plain, eager image records). */
export function isRendered(images: Record<string, Image>, camera: string): boolean {
  const rendered = (images as LazyRecord)[RENDERED];
  return rendered === undefined || rendered.has(camera);
}

/** A camera's shape if known without rendering it (declared, or the frame is already there). */
export function knownShape(images: Record<string, Image>, camera: string): ImageShape | undefined {
  if ((images as LazyRecord)[SHAPES]?.[camera] || isRendered(images, camera))
    return imageShape(images, camera);
  return undefined;
}

/**
 * A camera's shape without rendering it: declared by a lazy record, else read from the image
 * (already there for a plain record or a camera read before). Undefined for an unknown camera.
 */
export function imageShape(images: Record<string, Image>, camera: string): ImageShape | undefined {
  const declared = (images as LazyRecord)[SHAPES]?.[camera];
  if (declared) return declared;
  if (!(camera in images)) return undefined;
  const img = images[camera];
  return img && { width: img.width, height: img.height, channels: img.channels };
}

/**
 * A copy of `images` in which `camera` is `derive(images[camera])`, computed on first read from
 * the source's own (lazy) image and kept; the other cameras are the source's, read through on
 * demand. Nothing is rendered or derived until something reads it, so a perturbation of a frame
 * the policy never reads costs nothing, and the copy says which cameras were read from it
 * (`isRendered`): what a policy received. `shape` is the derived image's, if not the source's.
 */
export function withDerivedImage(
  images: Record<string, Image>,
  camera: string,
  derive: (source: Image) => Image,
  shape?: ImageShape,
): Record<string, Image> {
  const cameras = Object.keys(images);
  if (!cameras.includes(camera)) cameras.push(camera);
  const shapes: Record<string, ImageShape> = {};
  for (const c of cameras) {
    const s = c === camera && shape ? shape : (images as LazyRecord)[SHAPES]?.[c];
    if (s) shapes[c] = s;
  }
  return lazyImages(
    cameras,
    (c) => (c === camera ? derive(images[c] as Image) : (images[c] as Image)),
    () => true,
    undefined,
    shapes,
  );
}

/**
 * Takes a camera's encoded bytes to send them on, while its pixels have not been read (after a
 * read, an attack or a defense may have changed them, so only the pixels speak for what is sent).
 * The camera then counts as received in its encoded form (`forwardedSource`).
 */
export function forwardEncoded(
  images: Record<string, Image>,
  camera: string,
): EncodedSource | undefined {
  const sources = (images as LazyRecord)[SOURCES];
  if (!sources || isRendered(images, camera)) return undefined;
  const source = sources[camera];
  if (source) (images as LazyRecord)[FORWARDED]?.add(camera);
  return source;
}

/** The encoded bytes a camera was sent on as (forwardEncoded), if it was. */
export function forwardedSource(
  images: Record<string, Image>,
  camera: string,
): EncodedSource | undefined {
  const r = images as LazyRecord;
  return r[FORWARDED]?.has(camera) ? r[SOURCES]?.[camera] : undefined;
}
