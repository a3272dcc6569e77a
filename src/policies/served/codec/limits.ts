/**
 * Bounds on what decoding one frame may build. The frame cap (`--max-frame`, 64 MiB) limits the
 * bytes that arrive, not the objects they become: a 20 MB msgpack array of empty maps, or a JSON
 * array of `{}`, is tens of millions of objects and gigabytes of heap. Every decoder charges a
 * budget *before* it allocates (a container's declared length is charged when its header is
 * read, a PNG's pixels when its header is checked, base64 before it is decoded), so a frame over
 * a bound is refused after reading a few bytes, with the memory it holds still small.
 */
import { ProvaelError } from "../../../core/errors.js";

export interface DecodeLimits {
  /** Values one frame may hold: every scalar, string, container and map key counts as one. */
  maxElements: number;
  /** Estimated bytes of the decoded tree (objects, copied strings, decoded images and arrays). */
  maxBuiltBytes: number;
  /** Deepest nesting of containers. */
  maxDepth: number;
}

/**
 * The defaults. Real frames are far below them: a LIBERO observation is about 20 values and,
 * with two 256x256 PNGs decoded, about 1 MB built; an action chunk of 50x14 floats sent as plain
 * lists is 750 values. 262,144 values of the costliest kind (a map entry) are about 25 MB.
 */
export const DEFAULT_DECODE_LIMITS: DecodeLimits = {
  maxElements: 262_144,
  maxBuiltBytes: 128 * 1024 * 1024,
  maxDepth: 64,
};

/**
 * What we charge per decoded thing, in bytes of V8 heap (rounded up from measurements on Node 20:
 * a JS array slot is 8 bytes, a small object 40-60, a map entry a tuple plus a property).
 */
export const COST = {
  slot: 8,
  container: 48,
  mapEntry: 96,
  /** A string is copied into UTF-16 at worst. */
  stringPerByte: 2,
} as const;

/** The error every bound raises: a protocol error naming the bound, the limit and what it saw. */
export function overBound(
  what: string,
  bound: keyof DecodeLimits,
  limit: number,
  seen: number,
): ProvaelError {
  return new ProvaelError(
    "policy/protocol",
    `${what}: the frame exceeds ${bound} (${seen} > ${limit}), refused before decoding it`,
    {
      details: { bound, limit, seen },
      hint: "a frame this large in decoded objects is not an observation or an action; check the peer",
    },
  );
}

/** One frame's running account. `what` names the codec in errors ("msgpack", "json-numpy"). */
export class DecodeBudget {
  elements = 0;
  bytes = 0;

  constructor(
    readonly limits: DecodeLimits,
    private readonly what: string,
  ) {}

  /** Charges `elements` values and `bytes` bytes; throws if either bound would be passed. */
  take(elements: number, bytes: number): void {
    const e = this.elements + elements;
    if (e > this.limits.maxElements)
      throw overBound(this.what, "maxElements", this.limits.maxElements, e);
    const b = this.bytes + bytes;
    if (b > this.limits.maxBuiltBytes)
      throw overBound(this.what, "maxBuiltBytes", this.limits.maxBuiltBytes, b);
    this.elements = e;
    this.bytes = b;
  }

  depth(d: number): void {
    if (d > this.limits.maxDepth) throw overBound(this.what, "maxDepth", this.limits.maxDepth, d);
  }
}

/** Limits with some fields overridden (the rest from the defaults). */
export function decodeLimits(partial: Partial<DecodeLimits> = {}): DecodeLimits {
  return { ...DEFAULT_DECODE_LIMITS, ...partial };
}
