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
};

export function lazyImages(
  cameras: readonly string[],
  render: (camera: string) => Image,
  current: () => boolean,
  sources?: Readonly<Record<string, EncodedSource>>,
): Record<string, Image> {
  const out: LazyRecord = {};
  const rendered = new Set<string>();
  Object.defineProperty(out, RENDERED, { value: rendered, enumerable: false });
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
        cached = render(camera);
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
