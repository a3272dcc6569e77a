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

type LazyRecord = Record<string, Image> & { [RENDERED]?: Set<string> };

export function lazyImages(
  cameras: readonly string[],
  render: (camera: string) => Image,
  current: () => boolean,
): Record<string, Image> {
  const out: LazyRecord = {};
  const rendered = new Set<string>();
  Object.defineProperty(out, RENDERED, { value: rendered, enumerable: false });
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
