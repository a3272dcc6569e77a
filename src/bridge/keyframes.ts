/**
 * Keyframes of a bridged episode: a few of the camera images the policy received, written as the
 * built-in suites' frames are (`frames/<cell>/<camera>-<step>.png`), so report.html and
 * `provael view` show the attacked episode beside its benign twin. A built-in run replays its
 * episodes for frames afterwards; a benchmark's episode cannot be replayed, so the bridge keeps
 * them as they pass.
 *
 * The benchmark decides the horizon, so the frames kept are the steps at a stride that doubles
 * whenever more than `MAX_KEPT` are held (evenly spread whatever the length, as the built-in
 * suites' are over a known horizon), plus the last step. Each image is shrunk by an integer
 * factor to at most `MAX_SIDE` pixels a side: an episode's frames stay under
 * (MAX_KEPT + 1) × cameras × MAX_SIDE² × 3 bytes before PNG compression, whatever the benchmark
 * sends. Only the kept steps are decoded; the others travel on untouched.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { encodePng } from "../core/png.js";
import type { Image } from "../core/types.js";
import { framesDir, writeFileAtomic } from "../rundir/files.js";
import { frameName } from "../rundir/schema/index.js";

/** At most this many strided steps are held (between half of it and it, once the stride grows). */
export const MAX_KEPT = 8;
/** A kept image's longest side, in pixels, at most. */
export const MAX_SIDE = 128;

/** Camera names that make a frame file name (`FRAME_FILE`); others are not kept. */
const CAMERA = /^[A-Za-z0-9_]+$/;

/** An image shrunk by the smallest integer factor that brings its sides to `MAX_SIDE` (box mean). */
export function shrink(image: Image, maxSide = MAX_SIDE): Image {
  const f = Math.ceil(Math.max(image.width, image.height) / maxSide);
  if (f <= 1) return { ...image, data: image.data.slice() };
  const width = Math.floor(image.width / f);
  const height = Math.floor(image.height / f);
  const c = image.channels;
  const data = new Uint8Array(width * height * c);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++)
      for (let k = 0; k < c; k++) {
        let sum = 0;
        for (let dy = 0; dy < f; dy++)
          for (let dx = 0; dx < f; dx++)
            sum += image.data[((y * f + dy) * image.width + (x * f + dx)) * c + k] as number;
        data[(y * width + x) * c + k] = Math.round(sum / (f * f));
      }
  return { width, height, channels: c, data };
}

/**
 * The images of one step, shrunk (decoding the lazy ones); null when a camera has no pixels or
 * will not decode. Frames are evidence to look at, kept after the step was answered: one that
 * cannot be kept is left out, and what the policy made of it was decided by the policy.
 */
function snapshot(images: Record<string, Image>): Record<string, Image> | null {
  const out: Record<string, Image> = {};
  for (const camera of Object.keys(images).sort()) {
    if (!CAMERA.test(camera)) continue;
    const image = images[camera] as Image;
    if (!(image.width > 0 && image.height > 0)) return null;
    try {
      out[camera] = shrink(image);
    } catch {
      return null;
    }
  }
  return Object.keys(out).length > 0 ? out : null;
}

/** The frames of one episode as it is played. */
export class Keyframes {
  private stride = 1;
  private readonly kept = new Map<number, Record<string, Image>>();
  /** The latest step's images, undecoded until the episode ends. */
  private latest: { step: number; images: Record<string, Image> } | null = null;

  /** The images the policy received at `step` (0 = the first observation). */
  offer(step: number, images: Record<string, Image>): void {
    this.latest = { step, images };
    if (step % this.stride !== 0) return;
    const shot = snapshot(images);
    if (!shot) return;
    this.kept.set(step, shot);
    while (this.kept.size > MAX_KEPT) {
      this.stride *= 2;
      for (const s of [...this.kept.keys()]) if (s % this.stride !== 0) this.kept.delete(s);
    }
  }

  /** The kept steps with the last one, ascending. */
  frames(): [number, Record<string, Image>][] {
    const out = new Map(this.kept);
    if (this.latest && !out.has(this.latest.step)) {
      const shot = snapshot(this.latest.images);
      if (shot) out.set(this.latest.step, shot);
    }
    return [...out.entries()].sort((a, b) => a[0] - b[0]);
  }

  /**
   * Writes the frames under `runDir/frames/<cell>/`, replacing what an earlier, errored attempt
   * at the same cell left there; returns the number of PNGs written.
   */
  write(runDir: string, cell: string): number {
    const frames = this.frames();
    const dir = framesDir(runDir, cell);
    rmSync(dir, { recursive: true, force: true });
    if (frames.length === 0) return 0;
    mkdirSync(dir, { recursive: true });
    let written = 0;
    for (const [step, images] of frames)
      for (const [camera, image] of Object.entries(images)) {
        writeFileAtomic(join(dir, frameName(camera, step)), encodePng(image));
        written += 1;
      }
    return written;
  }
}
