/**
 * One camera's training frames, all the same size, held in blocks rather than one array: a
 * typed array in Node 20 stops at 4 GiB, and a training set of 350,000 frames at 64 px per
 * camera is past that (12,288 bytes a frame). Which block a frame lives in changes nothing a
 * training reads, so the same data gives the same bytes however it is blocked.
 *
 * @example
 *   const store = FrameStore.alloc(count, 64 * 64 * 3);
 *   store.set(i, pixels);
 *   const view = store.frame(i); // a view, no copy
 */

/** Frames a block holds at most: 1 GiB of them (a read or write call moves at most ~2 GiB). */
export function framesPerBlock(frameBytes: number): number {
  return Math.max(1, Math.floor(2 ** 30 / Math.max(1, frameBytes)));
}

export class FrameStore {
  private constructor(
    readonly count: number,
    readonly frameBytes: number,
    /** Frames in each block but perhaps the last. */
    readonly perBlock: number,
    readonly blocks: readonly Uint8Array[],
  ) {}

  /** Zeroed storage for `count` frames of `frameBytes` bytes each. */
  static alloc(
    count: number,
    frameBytes: number,
    perBlock = framesPerBlock(frameBytes),
  ): FrameStore {
    const blocks: Uint8Array[] = [];
    for (let at = 0; at < count; at += perBlock) {
      blocks.push(new Uint8Array(Math.min(perBlock, count - at) * frameBytes));
    }
    return new FrameStore(count, frameBytes, perBlock, blocks);
  }

  /** One array of `count` frames back to back, kept as it is (no copy). */
  static of(frames: Uint8Array, frameBytes: number): FrameStore {
    if (frameBytes <= 0 || frames.length % frameBytes !== 0) {
      throw new RangeError(`${frames.length} bytes are not whole frames of ${frameBytes} bytes`);
    }
    const count = frames.length / frameBytes;
    return new FrameStore(count, frameBytes, Math.max(1, count), count > 0 ? [frames] : []);
  }

  /** Frame i, a view into its block. */
  frame(i: number): Uint8Array {
    if (!Number.isInteger(i) || i < 0 || i >= this.count) {
      throw new RangeError(`frame ${i} is outside 0..${this.count - 1}`);
    }
    const block = this.blocks[Math.floor(i / this.perBlock)] as Uint8Array;
    const at = (i % this.perBlock) * this.frameBytes;
    return block.subarray(at, at + this.frameBytes);
  }

  set(i: number, pixels: Uint8Array): void {
    if (pixels.length !== this.frameBytes) {
      throw new RangeError(`a frame is ${this.frameBytes} bytes, not ${pixels.length}`);
    }
    this.frame(i).set(pixels);
  }

  get byteLength(): number {
    return this.count * this.frameBytes;
  }
}
