import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../test/support/tmp.js";
import { sha256 } from "../core/digest.js";
import type { Image, Observation } from "../core/types.js";
import { fnv1a, hashedBagOfWords, hashedIds, loadOnnxRuntime, onnxPolicy } from "./onnx.js";

const FIXTURES = join(import.meta.dirname, "..", "..", "test", "fixtures", "onnx");
const model = (f: string) => join(FIXTURES, f);

function ioMap(text: string): string {
  const p = join(tempDir(), "map.yaml");
  writeFileSync(p, text);
  return p;
}

const flat = (w: number, h: number, v: number): Image => ({
  width: w,
  height: h,
  channels: 3,
  data: new Uint8Array(w * h * 3).fill(v),
});

const obs = (over: Partial<Observation> = {}): Observation => ({
  images: { agentview: flat(16, 16, 51), wrist: flat(16, 16, 102) },
  state: Float32Array.of(0.1, -0.2, 0.3, 0, 0.5, -0.5, 0.04, 0.04),
  instruction: "Pick up the bowl",
  ...over,
});

/** The fixture's weights, recomputed the way scripts/make-onnx-models.mjs draws them. */
function weights(n: number, seed: number, scale: number): number[] {
  let s = seed >>> 0;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out.push(Math.fround(((s / 2 ** 32) * 2 - 1) * scale));
  }
  return out;
}

describe("onnx policy", () => {
  const STATE_IMAGE = ioMap(
    [
      "inputs:",
      "  - { name: state, from: state }",
      "  - { name: image, from: image, camera: agentview, size: 16, layout: NCHW }",
      "output: { name: action }",
    ].join("\n"),
  );

  it("feeds state and an NCHW image and returns Gemm(state) + mean(image) * v", async () => {
    const inst = await onnxPolicy.load({
      path: model("state-image.onnx"),
      extra: { ioMap: STATE_IMAGE },
    });
    try {
      const o = obs();
      const a = await inst.act(o);
      const W = weights(56, 1, 0.5);
      const b = weights(7, 2, 0.1);
      const v = weights(7, 3, 1);
      const mean = 51 / 255;
      const want = Array.from({ length: 7 }, (_, j) => {
        let s = b[j] as number;
        for (let i = 0; i < 8; i++) s += (o.state[i] as number) * (W[i * 7 + j] as number);
        return s + mean * (v[j] as number);
      });
      for (let j = 0; j < 7; j++) expect(a[j]).toBeCloseTo(want[j] as number, 5);
      expect(inst.capabilities.cameras).toEqual(["agentview"]);
      expect(inst.digest).toBe(sha256(readFileSync(model("state-image.onnx"))));
      // Same input, same output: the runtime is deterministic on one thread.
      expect(Array.from(await inst.act(o))).toEqual(Array.from(a));
    } finally {
      await inst.close();
    }
  });

  it("executes `replan` actions of a chunk before running the model again; query leaves the chunk alone", async () => {
    const map = ioMap(
      [
        "inputs:",
        "  - { name: state, from: state, indices: [0, 1, 2, 3, 4, 5, 6, 7] }",
        "  - { name: text, from: text, encoding: hashed-bow, dim: 32 }",
        "  - { name: pixels, from: image, camera: wrist, size: [16, 16], layout: NHWC }",
        "output: { kind: chunk, clip: [-1, 1] }",
        "replan: 3",
      ].join("\n"),
    );
    const inst = await onnxPolicy.load({ path: model("chunk-text.onnx"), extra: { ioMap: map } });
    try {
      inst.reset({ task: "t", seed: 0, policySeed: 0 });
      const first = await inst.act(obs());
      const q = await inst.query?.(obs({ instruction: "something else entirely" }));
      expect(q).toBeDefined();
      const second = await inst.act(obs({ state: new Float32Array(8) }));
      const third = await inst.act(obs({ state: new Float32Array(8) }));
      const fourth = await inst.act(obs({ state: new Float32Array(8) }));
      // Rows 2 and 3 come from the first chunk, whatever the new observation says.
      expect(second).not.toEqual(first);
      expect(third).not.toEqual(second);
      // The fourth call ran the model again on the zero state: a different chunk.
      expect(fourth).not.toEqual(first);
      expect(Array.from(fourth).every((x) => x >= -1 && x <= 1)).toBe(true);
      // The instruction matters: another text changes the first action.
      inst.reset({ task: "t", seed: 0, policySeed: 0 });
      const other = await inst.act(obs({ instruction: "open the drawer" }));
      expect(Array.from(other)).not.toEqual(Array.from(first));
    } finally {
      await inst.close();
    }
  });

  it("says which names do not match the model", async () => {
    const map = ioMap("inputs:\n  - { name: obs, from: state }\n");
    await expect(
      onnxPolicy.load({ path: model("state-image.onnx"), extra: { ioMap: map } }),
    ).rejects.toThrow(/no model input named obs; model inputs state, image are not fed/);
    const bad = ioMap("inputs:\n  - { name: state, from: sonar }\n");
    await expect(
      onnxPolicy.load({ path: model("state-image.onnx"), extra: { ioMap: bad } }),
    ).rejects.toThrow(/io-map .*inputs\.0/);
    await expect(onnxPolicy.load({ path: model("state-image.onnx") })).rejects.toThrow(
      /needs --policy-path and --io-map/,
    );
  });

  it("reports a wrong input shape as a policy error, not a crash", async () => {
    const map = ioMap(
      [
        "inputs:",
        "  - { name: state, from: state, indices: [0, 1, 2] }",
        "  - { name: image, from: image, camera: agentview, size: 16 }",
      ].join("\n"),
    );
    const inst = await onnxPolicy.load({ path: model("state-image.onnx"), extra: { ioMap: map } });
    try {
      await expect(inst.act(obs())).rejects.toMatchObject({ code: "policy/error" });
    } finally {
      await inst.close();
    }
  });

  it("names the install command when the optional runtime is absent", async () => {
    // A package name that is not installed stands in for a consumer without onnxruntime-node.
    const err = await loadOnnxRuntime("onnxruntime-node-absent").catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "policy/load" });
    expect((err as Error).message).toContain("onnxruntime-node-absent");
    expect((err as { hint: string }).hint).toMatch(/npm install onnxruntime-node-absent@1\.30\.0/);
  });

  it("hashes text the documented way", () => {
    expect(fnv1a("a")).toBe(0xe40c292c);
    const v = hashedBagOfWords("the bowl, the BOWL", 16);
    expect(v.reduce((s, x) => s + x, 0)).toBe(4);
    expect(v[fnv1a("bowl") % 16]).toBe(2);
    expect(Array.from(hashedIds("pick up", 4, 100))).toEqual([
      BigInt((fnv1a("pick") % 99) + 1),
      BigInt((fnv1a("up") % 99) + 1),
      0n,
      0n,
    ]);
  });
});
