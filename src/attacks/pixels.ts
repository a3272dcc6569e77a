/**
 * Pixel-space helpers shared by the patch attacks (visual, search, gradient): where a patch goes
 * in a camera image and how it is written without touching the suite's own buffers. Every patch
 * attack uses the same placement rule, so a templated patch, its placebo and the optimised ones
 * cover the same pixels in the same cell and their rates compare like for like.
 */
import { imageShape, withDerivedImage } from "../core/lazy-images.js";
import { Rng } from "../core/rng.js";
import type { Image, Observation, SuiteCapabilities, TaskSpec } from "../core/types.js";
import { projectPoint } from "./scene.js";

/** A square patch in one camera image: top-left corner and side, in pixels. */
export interface PatchRegion {
  camera: string;
  x: number;
  y: number;
  size: number;
  /**
   * What the region was anchored on: the projected hazard, a seeded spot when unknown, or one
   * spot of a scan's fixed grid over the image (`trigger_scan`).
   */
  anchor: "hazard" | "seeded" | "scan";
}

/** Side of a patch covering `fraction` of the image's shorter side (at least 2 pixels). */
export function patchSide(img: { width: number; height: number }, fraction: number): number {
  const short = Math.min(img.width, img.height);
  return Math.max(Math.min(2, short), Math.min(short, Math.round(fraction * short)));
}

/** The generator of a cell's patch placement, shared by every patch attack. */
export function placementRng(task: string, seed: number, repeat: number): Rng {
  return Rng.fromLabel(`patch-placement:${task}:${seed}:${repeat}`);
}

/**
 * Places a patch: centred on the hazard's projection in `camera` (a world-fixed camera of a suite
 * whose geometry is known), moved by a seeded offset of up to a quarter side; else at a seeded
 * spot. Always inside the image.
 */
export class PatchPlacer {
  private readonly jitter: [number, number];
  private readonly spot: [number, number];

  constructor(
    private readonly suite: { capabilities: SuiteCapabilities },
    private readonly task: TaskSpec,
    rng: Rng,
  ) {
    this.jitter = [rng.uniform(-0.25, 0.25), rng.uniform(-0.25, 0.25)];
    this.spot = [rng.float(), rng.float()];
  }

  region(obs: Observation, camera: string, fraction: number): PatchRegion | null {
    // The shape, not the pixels: placing a patch renders nothing (the region is a function of
    // the cell, the step's state and the task, whichever step first renders the camera).
    const img = imageShape(obs.images, camera);
    if (!img || img.width === 0 || img.height === 0) return null;
    const size = patchSide(img, fraction);
    const model = this.suite.capabilities.cameraModels?.find((c) => c.name === camera);
    const target = this.task.hazard.targetPos;
    const p =
      model && target ? projectPoint(model, target, img.width, img.height, obs.privileged) : null;
    const inside = p && p.col >= 0 && p.col < img.width && p.row >= 0 && p.row < img.height;
    let cx: number;
    let cy: number;
    if (p && inside) {
      cx = p.col + this.jitter[0] * size;
      cy = p.row + this.jitter[1] * size;
    } else {
      cx = this.spot[0] * img.width;
      cy = this.spot[1] * img.height;
    }
    const clamp = (v: number, hi: number) => Math.max(0, Math.min(hi, Math.round(v - size / 2)));
    return {
      camera,
      x: clamp(cx, img.width - size),
      y: clamp(cy, img.height - size),
      size,
      anchor: p && inside ? "hazard" : "seeded",
    };
  }
}

/**
 * A copy of `obs` whose image `camera` is replaced (the suite's buffers are never written). The
 * other cameras stay unrendered until read, and the copy counts `camera` as received only once
 * something reads it (as the suite's own lazy cameras do).
 */
export function withImage(obs: Observation, camera: string, img: Image): Observation {
  return {
    ...obs,
    images: withDerivedImage(obs.images, camera, () => img, {
      width: img.width,
      height: img.height,
      channels: img.channels,
    }),
  };
}

/**
 * A copy of `obs` whose image `camera` is `derive` of the clean one, computed when something
 * first reads it (the policy, a defense, a frame capture) and once: a patch on a frame the policy
 * never reads is never drawn, nor is that frame rendered.
 */
export function withLazyImage(
  obs: Observation,
  camera: string,
  derive: (clean: Image) => Image,
): Observation {
  return { ...obs, images: withDerivedImage(obs.images, camera, derive) };
}

/** The image with `pixels` (size*size*channels bytes, row-major) written into the region. */
export function pastePatch(img: Image, region: PatchRegion, pixels: Uint8Array): Image {
  const data = new Uint8Array(img.data);
  const c = img.channels;
  for (let r = 0; r < region.size; r++) {
    const from = r * region.size * c;
    data.set(
      pixels.subarray(from, from + region.size * c),
      ((region.y + r) * img.width + region.x) * c,
    );
  }
  return { ...img, data };
}

/** The region's pixels as a size*size*channels array. */
export function readPatch(img: Image, region: PatchRegion): Uint8Array {
  const c = img.channels;
  const out = new Uint8Array(region.size * region.size * c);
  for (let r = 0; r < region.size; r++) {
    const at = ((region.y + r) * img.width + region.x) * c;
    out.set(img.data.subarray(at, at + region.size * c), r * region.size * c);
  }
  return out;
}

/**
 * The image with a float perturbation (pixel units, size*size*channels) added inside the region,
 * rounded and clipped to 0..255.
 */
export function addPerturbation(img: Image, region: PatchRegion, delta: Float32Array): Image {
  const data = new Uint8Array(img.data);
  const c = img.channels;
  for (let r = 0; r < region.size; r++) {
    for (let k = 0; k < region.size * c; k++) {
      const at = ((region.y + r) * img.width + region.x) * c + k;
      const v = (img.data[at] as number) + (delta[r * region.size * c + k] as number);
      data[at] = Math.max(0, Math.min(255, Math.round(v)));
    }
  }
  return { ...img, data };
}

/**
 * A patch image from a coarse grid of colours (cells*cells*3 values in 0..255), each cell
 * stretched over an equal block of the patch: the low-dimensional form search attacks optimise.
 */
export function upsampleGrid(grid: ArrayLike<number>, cells: number, size: number): Uint8Array {
  const out = new Uint8Array(size * size * 3);
  for (let r = 0; r < size; r++) {
    const gr = Math.min(cells - 1, Math.floor((r * cells) / size));
    for (let col = 0; col < size; col++) {
      const gc = Math.min(cells - 1, Math.floor((col * cells) / size));
      for (let k = 0; k < 3; k++) {
        const v = grid[(gr * cells + gc) * 3 + k] ?? 0;
        out[(r * size + col) * 3 + k] = Math.max(0, Math.min(255, Math.round(v)));
      }
    }
  }
  return out;
}
