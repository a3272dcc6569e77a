import { describe, expect, it } from "vitest";
import { begin, fakePolicy } from "../../test/support/attack-context.js";
import { Rng } from "../core/rng.js";
import type { WeightAccess } from "../core/types.js";
import { stubSuite } from "../suites/stub.js";
import {
  drawFlips,
  LOW_BITS,
  lowbitFlips1,
  lowbitFlips8,
  lowbitFlips64,
  weightBitflip1,
  weightBitflip8,
  weightBitflip64,
} from "./weights.js";

/** A fake policy with float32 weights and a counter of weightsChanged calls. */
function weighted() {
  const rng = Rng.fromLabel("weights");
  const tensors = [
    { name: "a", data: Float32Array.from({ length: 300 }, () => rng.normal()) },
    { name: "b", data: Float32Array.from({ length: 1000 }, () => rng.normal() * 1e-3) },
  ];
  let changed = 0;
  const access: WeightAccess = {
    weightTensors: () => tensors,
    weightsChanged: () => {
      changed += 1;
    },
  };
  const policy = fakePolicy(() => new Float32Array(7), { weights: access });
  const bits = () => tensors.map((t) => Array.from(new Uint32Array(t.data.buffer.slice(0))));
  return { policy, tensors, bits, changed: () => changed };
}

const task = stubSuite.tasks()[0]!;

describe("weight_bitflip_N", () => {
  it.each([
    [weightBitflip1, 1],
    [weightBitflip8, 8],
    [weightBitflip64, 64],
  ])("%o flips exactly N bits and restores every weight bit-exactly", async (attack, n) => {
    const w = weighted();
    const original = w.bits();
    const { hooks } = await begin(attack, { suite: stubSuite, task, policy: w.policy, seed: 7 });
    expect(attack.id).toBe(`weight_bitflip_${n}`);
    const flipped = w.bits();
    let differingBits = 0;
    original.forEach((t, i) => {
      t.forEach((v, j) => {
        let x = (v ^ (flipped[i]?.[j] ?? 0)) >>> 0;
        while (x) {
          differingBits += x & 1;
          x >>>= 1;
        }
      });
    });
    expect(differingBits).toBe(n);
    expect(w.changed()).toBe(1);
    for (const t of w.tensors) expect(t.data.every(Number.isFinite)).toBe(true);
    const b = hooks.budget?.();
    expect(b).toMatchObject({ kind: "bit-flips", limit: n, used: n });
    expect(b?.detail?.positions_digest).toMatch(/^sha256:/);
    await hooks.end?.();
    expect(w.bits()).toEqual(original);
    expect(w.changed()).toBe(2);
    // Ending twice restores once.
    await hooks.end?.();
    expect(w.changed()).toBe(2);
  });

  it("draws the same positions for the same cell and other positions for another seed", async () => {
    const digest = async (seed: number) => {
      const w = weighted();
      const { hooks } = await begin(weightBitflip8, {
        suite: stubSuite,
        task,
        policy: w.policy,
        seed,
      });
      const d = hooks.budget?.().detail?.positions_digest;
      await hooks.end?.();
      return d;
    };
    expect(await digest(1)).toBe(await digest(1));
    expect(await digest(1)).not.toBe(await digest(2));
  });

  it("redraws a flip that would make a weight non-finite", () => {
    // Every weight is 1.5 (exponent 0x7f); flipping bit 30 gives exponent 0xff: Infinity or NaN.
    const t = [{ name: "w", data: new Float32Array(4).fill(1.5) }];
    const { flips, redrawn } = drawFlips(t, 3, Rng.fromLabel("x"), [29, 30]);
    expect(flips.every((f) => f.bit === 29)).toBe(true);
    expect(redrawn).toBeGreaterThan(0);
  });

  it("refuses to be told a count other than its name's", () => {
    expect(() => weightBitflip8.params.parse({ flips: 9 })).toThrow();
    expect(weightBitflip8.params.parse({})).toMatchObject({ flips: 8 });
  });
});

describe("lowbit_flips_N", () => {
  it.each([
    [lowbitFlips1, weightBitflip1, 1],
    [lowbitFlips8, weightBitflip8, 8],
    [lowbitFlips64, weightBitflip64, 64],
  ])(
    "%o flips as many bits as its attack, only in the lowest mantissa bits, and restores them",
    async (control, attack, n) => {
      expect(control.matches).toBe(attack.id);
      const w = weighted();
      const original = w.bits();
      const values = w.tensors.map((t) => Float32Array.from(t.data));
      const { hooks } = await begin(control, { suite: stubSuite, task, policy: w.policy, seed: 7 });
      const flipped = w.bits();
      let differing = 0;
      original.forEach((t, i) => {
        t.forEach((v, j) => {
          const x = (v ^ (flipped[i]?.[j] ?? 0)) >>> 0;
          if (x === 0) return;
          // Every changed bit is at or below bit 7: the weight moves by at most 2^-16 of itself.
          expect(x >>> (LOW_BITS[1] + 1)).toBe(0);
          for (let y = x; y; y >>>= 1) differing += y & 1;
          const before = values[i]![j]!;
          const after = w.tensors[i]!.data[j]!;
          expect(Math.abs(after - before)).toBeLessThanOrEqual(Math.abs(before) * 2 ** -15);
        });
      });
      expect(differing).toBe(n);
      expect(hooks.budget?.()).toMatchObject({
        kind: "bit-flips",
        limit: n,
        used: n,
        detail: { exponent_flips: 0, sign_flips: 0 },
      });
      await hooks.end?.();
      expect(w.bits()).toEqual(original);
    },
  );

  it("does not take the attack's bit range (the attacker's choice), and is deterministic per cell", async () => {
    const given = { weight_bitflip_8: { bits: [23, 30] } };
    const a = await begin(lowbitFlips8, {
      suite: stubSuite,
      task,
      policy: weighted().policy,
      given,
    });
    expect(a.ctx.params).toEqual({ flips: 8, bits: [0, 7] });
    await a.hooks.end?.();
    expect(() => lowbitFlips8.params.parse({ bits: [0, 23] })).toThrow();
    const digest = async () => {
      const { hooks } = await begin(lowbitFlips8, {
        suite: stubSuite,
        task,
        policy: weighted().policy,
        seed: 2,
      });
      await hooks.end?.();
      return hooks.budget?.().detail?.positions_digest;
    };
    expect(await digest()).toBe(await digest());
  });
});
