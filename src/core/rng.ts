import { sha256Bytes } from "./digest.js";

/**
 * The one source of randomness in Provael: xoshiro128** (Blackman and Vigna, 2018), a 32-bit
 * generator with 128 bits of state and period 2^128 - 1.
 *
 * A generator is always derived from a *label* (a cell id, an attack id plus a seed, …) by taking
 * the first 16 bytes of SHA-256(label) as its state. Two labels therefore never share a stream in
 * practice, and the values a cell sees do not depend on which cells ran before it.
 *
 * @example
 *   const rng = Rng.fromLabel("cell:abc");
 *   rng.float(); // in [0, 1)
 *   const child = rng.fork("attack"); // independent stream for a sub-component
 */
export class Rng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;
  readonly label: string;

  private constructor(label: string, state: Uint8Array) {
    this.label = label;
    const v = new DataView(state.buffer, state.byteOffset, 16);
    this.s0 = v.getUint32(0, true);
    this.s1 = v.getUint32(4, true);
    this.s2 = v.getUint32(8, true);
    this.s3 = v.getUint32(12, true);
    // The all-zero state is the one fixed point of xoshiro; SHA-256 makes it astronomically
    // unlikely, but a generator must never be able to get stuck.
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 0x9e3779b9;
  }

  /** A generator with an explicit 128-bit state (for checking against reference vectors). */
  static fromState(label: string, state: [number, number, number, number]): Rng {
    const bytes = new Uint8Array(16);
    const v = new DataView(bytes.buffer);
    state.forEach((x, i) => {
      v.setUint32(i * 4, x >>> 0, true);
    });
    return new Rng(label, bytes);
  }

  /** A generator seeded from SHA-256 of the label. */
  static fromLabel(label: string): Rng {
    return new Rng(label, sha256Bytes(`provael-rng/1:${label}`));
  }

  /** An independent child generator; the parent's stream is not consumed. */
  fork(sublabel: string): Rng {
    return Rng.fromLabel(`${this.label}/${sublabel}`);
  }

  /** Next 32-bit unsigned integer. */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform double in [0, 1) with 53 random bits. */
  float(): number {
    const hi = this.nextUint32() >>> 5; // 27 bits
    const lo = this.nextUint32() >>> 6; // 26 bits
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** Uniform double in [low, high). */
  uniform(low: number, high: number): number {
    return low + (high - low) * this.float();
  }

  /** Uniform integer in [0, n), without modulo bias. */
  int(n: number): number {
    if (!Number.isInteger(n) || n <= 0)
      throw new RangeError(`Rng.int needs a positive integer, got ${n}`);
    if (n > 0x100000000) return Math.floor(this.float() * n);
    const limit = 0x100000000 - (0x100000000 % n);
    for (;;) {
      const x = this.nextUint32();
      if (x < limit) return x % n;
    }
  }

  /** Standard normal by the Box-Muller transform. */
  normal(): number {
    let u = 0;
    while (u === 0) u = this.float();
    const v = this.float();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** True with probability p. */
  bernoulli(p: number): boolean {
    return this.float() < p;
  }

  /** One element chosen uniformly. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError("Rng.pick on an empty list");
    return items[this.int(items.length)] as T;
  }

  /**
   * `k` distinct elements in random order: the first `k` steps of a forward Fisher-Yates
   * shuffle, so it draws `k` numbers, not one per element.
   */
  sample<T>(items: readonly T[], k: number): T[] {
    if (!(Number.isInteger(k) && k >= 0 && k <= items.length))
      throw new RangeError(`Rng.sample of ${k} from ${items.length} items`);
    const out = items.slice();
    for (let i = 0; i < k; i++) {
      const j = i + this.int(out.length - i);
      const tmp = out[i] as T;
      out[i] = out[j] as T;
      out[j] = tmp;
    }
    return out.slice(0, k);
  }

  /** A shuffled copy (Fisher-Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const tmp = out[i] as T;
      out[i] = out[j] as T;
      out[j] = tmp;
    }
    return out;
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
