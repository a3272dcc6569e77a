import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../../../test/support/tmp.js";
import { sha256 } from "../../core/digest.js";
import { Rng } from "../../core/rng.js";
import type { Image } from "../../core/types.js";
import { tfReady } from "./backend.js";
import type { FrameStore } from "./frame-store.js";
import {
  areaWeights,
  batchTensors,
  completeWeights,
  defaultConfig,
  forward,
  initWeights,
  locatorConfig,
  locatorOutputs,
  nearPeak,
  parameterCount,
  patchGrid,
  patchify,
  resizeAdjoint,
  resizeArea,
  stateFeatureDim,
  stateFeatures,
  type TinyVlaConfig,
  textTensor,
  toTensors,
  unpatchify,
  type Weights,
  weightShapes,
} from "./model.js";
import { TinyVlaInstance, tinyVlaPolicy } from "./policy.js";
import { TinyVlaRuntime } from "./runtime.js";
import {
  syntheticInstructions,
  syntheticLocatorSet,
  syntheticScene,
  syntheticTrainingSet,
  syntheticTriggerSet,
} from "./synthetic.js";
import { emptyInputs, inputInto } from "./text-units.js";
import { Tokenizer } from "./tokenizer.js";
import { heatmapTarget, textLayoutOf, trainLocator, trainTinyVla } from "./train.js";
import { trainSecondLook } from "./train-refine.js";
import { loadWeights } from "./weights.js";
import { saveWeights } from "./weights-files.js";

const STATS = {
  stateMean: [0, 0, 1, 0, 0, 0, 0, 0, 0, 0.04, 0.04],
  stateStd: [0.6, 0.6, 0.1, 1, 1, 1, 1, 1, 1, 0.01, 0.01],
  actionScale: [0.8, 0.8, 0.05, 0.05, 0.05, 0.05, 1],
};

function small(tok: Tokenizer): TinyVlaConfig {
  return defaultConfig(tok.size, STATS, {
    imageSize: 32,
    patch: 8,
    dim: 32,
    textDim: 32,
    keypoints: 4,
    pooled: 8,
    hidden: [64],
  });
}

describe("tiny-vla model", () => {
  const tok = Tokenizer.build(syntheticInstructions(), 16);
  const cfg = small(tok);

  beforeAll(async () => {
    await tfReady();
  });

  it("resizes by area averaging and its adjoint matches the resize", () => {
    for (const [from, to] of [
      [128, 64],
      [100, 64],
      [64, 64],
    ] as const) {
      for (const cell of areaWeights(from, to)) {
        expect(cell.reduce((s, [, w]) => s + w, 0)).toBeCloseTo(1, 9);
      }
    }
    const img: Image = {
      width: 4,
      height: 2,
      channels: 3,
      data: Uint8Array.from({ length: 24 }, (_, i) => i * 10),
    };
    // 4x2 -> 2x2: each output pixel averages a horizontal pair.
    const out = resizeArea(img, 2);
    expect(Array.from(out.slice(0, 3))).toEqual([15, 25, 35]);
    // <A x, y> == <x, A^T y> for the linear (unrounded) resize.
    const g = Float32Array.from({ length: 12 }, (_, i) => (i % 5) - 2);
    const back = resizeAdjoint(g, 2, 4, 2);
    const wy = areaWeights(2, 2);
    const wx = areaWeights(4, 2);
    let lhs = 0;
    for (let i = 0; i < 2; i++)
      for (let j = 0; j < 2; j++)
        for (let c = 0; c < 3; c++) {
          let v = 0;
          for (const [y, a] of wy[i] ?? [])
            for (const [x, b] of wx[j] ?? []) v += a * b * (img.data[(y * 4 + x) * 3 + c] ?? 0);
          lhs += v * (g[(i * 2 + j) * 3 + c] ?? 0);
        }
    const rhs = back.reduce((s, v, k) => s + v * (img.data[k] ?? 0), 0);
    expect(rhs).toBeCloseTo(lhs, 3);
  });

  it("turns axis-angle into rotation columns that do not flip near a half turn", () => {
    const a = new Float32Array(11);
    const b = new Float32Array(11);
    stateFeatures(cfg, [0.1, 0.2, 1.1, -0.318, 3.125, 0, 0.05, 0.05], a);
    stateFeatures(cfg, [0.1, 0.2, 1.1, 0.318, -3.125, 0, 0.05, 0.05], b);
    expect(stateFeatureDim(cfg)).toBe(11);
    for (let k = 0; k < 11; k++) expect(a[k]).toBeCloseTo(b[k] as number, 2);
    const id = new Float32Array(11);
    stateFeatures(cfg, [0, 0, 0, 0, 0, 0, 0, 0], id);
    expect(Array.from(id.slice(3, 9))).toEqual([1, 0, 0, 0, 1, 0]);
  });

  it("patchify and unpatchify are inverse layouts", () => {
    const { count, size } = patchGrid(cfg);
    const px = Uint8Array.from({ length: 32 * 32 * 3 }, (_, i) => i % 251);
    const p = new Float32Array(count * size);
    patchify(cfg, px, p);
    const back = unpatchify(cfg, p);
    expect(Array.from(back.slice(0, 6)).map((v) => Math.round((v + 0.5) * 255))).toEqual(
      Array.from(px.slice(0, 6)),
    );
    expect(back.every((v, i) => Math.abs(v - ((px[i] as number) / 255 - 0.5)) < 1e-6)).toBe(true);
  });

  it("forward gives a chunk of actions per sample", async () => {
    const tf = await tfReady();
    const weights = initWeights(cfg, Rng.fromLabel("shapes"));
    expect(parameterCount(cfg)).toBe([...weights.values()].reduce((s, w) => s + w.length, 0));
    const set = syntheticTrainingSet(cfg, tok, 3);
    const { count, size } = patchGrid(cfg);
    const host = {
      size: 3,
      patches: cfg.cameras.map((_, c) => {
        const out = new Float32Array(3 * count * size);
        for (let i = 0; i < 3; i++) {
          patchify(cfg, (set.images[c] as FrameStore).frame(i), out, i * count * size);
        }
        return out;
      }),
      text: new Float32Array(3 * cfg.vocabSize),
      state: new Float32Array(3 * stateFeatureDim(cfg)),
    };
    for (let i = 0; i < 3; i++)
      stateFeatures(cfg, set.state.subarray(i * 8, i * 8 + 8), host.state, i * 11);
    const w = toTensors(tf, cfg, weights);
    const shapes = tf.tidy(() => {
      const out = forward(tf, w, batchTensors(tf, cfg, host), cfg);
      return [out.move.shape, out.grip.shape];
    });
    expect(shapes).toEqual([
      [3, 4, 6],
      [3, 4],
    ]);
    for (const t of Object.values(w)) t.dispose();
  });

  it("absolute aux mode: the localisation head never reads the state, the action head does", async () => {
    const tf = await tfReady();
    const c = {
      ...cfg,
      auxMode: "absolute" as const,
      auxToHead: true,
      targetAttention: true,
      auxMean: [0.1, -0.05],
      auxScale: [0.08, 0.08],
    };
    const weights = initWeights(c, Rng.fromLabel("absolute"));
    expect(parameterCount(c)).toBe([...weights.values()].reduce((s, w) => s + w.length, 0));
    const set = syntheticTrainingSet(c, tok, 1);
    const { count, size } = patchGrid(c);
    const input = (stateShift: number) => {
      const patches = c.cameras.map((_, k) => {
        const out = new Float32Array(count * size);
        patchify(c, (set.images[k] as FrameStore).frame(0), out);
        return out;
      });
      const state = new Float32Array(stateFeatureDim(c));
      stateFeatures(c, set.state.subarray(0, 8), state);
      state[0] = (state[0] as number) + stateShift;
      return { size: 1, patches, text: tok.bag(syntheticInstructions()[0] as string), state };
    };
    const w = toTensors(tf, c, weights);
    const run = (shift: number) =>
      tf.tidy(() => {
        const out = forward(tf, w, batchTensors(tf, c, input(shift)), c, true);
        return [out.aux?.dataSync() ?? [], out.move.dataSync()].map((a) => Array.from(a));
      });
    const [aux0, move0] = run(0);
    const [aux1, move1] = run(0.05);
    expect(aux1).toEqual(aux0);
    expect(move1).not.toEqual(move0);
    for (const t of Object.values(w)) t.dispose();
  });

  it("saves and loads weights bit-exactly; the digest is the SHA-256 of weights.bin", () => {
    const weights = initWeights(cfg, Rng.fromLabel("save"));
    const dir = tempDir();
    const digest = saveWeights(dir, {
      config: cfg,
      text: tok,
      weights,
      training: { note: "test" },
    });
    expect(digest).toBe(sha256(readFileSync(join(dir, "weights.bin"))));
    const back = loadWeights(dir);
    expect(back.digest).toBe(digest);
    expect(back.config).toEqual(cfg);
    expect(back.text.toJson()).toEqual(tok.toJson());
    // A word model's manifest is v1's: the vocabulary as `tokenizer`, no `textUnits`.
    const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
    expect(manifest.tokenizer).toEqual({ vocabulary: tok.vocabulary, maxLength: 16 });
    expect(manifest.textUnits).toBeUndefined();
    for (const [name] of weightShapes(cfg))
      expect(back.weights.get(name)).toEqual(weights.get(name));
    // A flipped byte in weights.bin is caught at load.
    const bin = readFileSync(join(dir, "weights.bin"));
    bin[10] = (bin[10] as number) ^ 0xff;
    writeFileSync(join(dir, "weights.bin"), bin);
    expect(() => loadWeights(dir)).toThrow(/does not match its manifest's digest/);
    expect(() => loadWeights(join(dir, "missing"))).toThrow(/no tiny-vla weights/);
  });

  it("trains on tiny synthetic data: the loss goes down, deterministically", async () => {
    const set = syntheticTrainingSet(cfg, tok, 200);
    const run = () =>
      trainTinyVla(set, cfg, {
        seed: 1,
        steps: 120,
        batchSize: 16,
        logEvery: 20,
        learningRate: 3e-3,
      });
    const a = await run();
    const first = a.history[0]?.loss as number;
    const last = a.history[a.history.length - 1]?.loss as number;
    expect(a.history.length).toBe(6);
    expect(last).toBeLessThan(first * 0.8);
    // The auxiliary localisation loss is part of the objective and falls too.
    expect(a.history[0]?.aux).toBeGreaterThan(0);
    expect(a.history[5]?.aux as number).toBeLessThan(a.history[0]?.aux as number);
    const b = await run();
    for (const [name, w] of a.weights) expect(b.weights.get(name)).toEqual(w);
  });

  it("anchored: localises the named object once per episode and acts relative to it", async () => {
    const c = {
      ...cfg,
      auxMode: "anchored" as const,
      auxToHead: true,
      auxMean: [0.1, -0.05],
      auxScale: [0.08, 0.08],
    };
    const rt = await TinyVlaRuntime.create({
      config: c,
      text: tok,
      weights: initWeights(c, Rng.fromLabel("anchored")),
    });
    expect(rt.anchored).toBe(true);
    const inst = new TinyVlaInstance(rt, "sha256:test", 1);
    const first = syntheticScene("anchor-a").obs;
    const later = syntheticScene("anchor-b").obs;
    let calls = 0;
    const localise = rt.localise.bind(rt);
    rt.localise = (obs) => {
      calls++;
      return localise(obs);
    };
    inst.reset({ task: "t", seed: 0, policySeed: 0 });
    inst.act(first);
    const kept = inst.act(later);
    expect(calls).toBe(1);
    // Acting on `later` used the anchor from `first`, not one localised on `later`.
    expect(Array.from(kept)).toEqual(Array.from(rt.predict(later, localise(first)).slice(0, 7)));
    inst.reset({ task: "t", seed: 1, policySeed: 0 });
    inst.act(later);
    expect(calls).toBe(2);
    rt.dispose();
  });

  it("temporal ensembling averages what the last chunks said about this step", async () => {
    const rt = await TinyVlaRuntime.create({
      config: cfg,
      text: tok,
      weights: initWeights(cfg, Rng.fromLabel("ens")),
    });
    const frames = ["ens-a", "ens-b", "ens-c", "ens-d", "ens-e", "ens-f"].map(
      (l) => syntheticScene(l).obs,
    );
    const raws = frames.map((o) => rt.raw(o));
    const m = cfg.actionDim - 1;
    const clip = (x: number) => Math.max(-1, Math.min(1, x));
    const decay = 0.5;
    const inst = new TinyVlaInstance(rt, "sha256:test", 1, decay);
    inst.reset({ task: "t", seed: 0, policySeed: 0 });
    for (let t = 0; t < frames.length; t++) {
      const got = inst.act(frames[t] as (typeof frames)[number]);
      // The predictions of steps t-n+1..t, oldest first; the one made j steps ago speaks at j.
      const from = Math.max(0, t - cfg.chunk + 1);
      let total = 0;
      let logit = 0;
      const want = new Array<number>(m).fill(0);
      for (let s = from; s <= t; s++) {
        const w = Math.exp(-decay * (s - from));
        const r = raws[s] as (typeof raws)[number];
        for (let d = 0; d < m; d++)
          want[d] = (want[d] as number) + w * clip(r.move[(t - s) * m + d] as number);
        logit += w * (r.grip[t - s] as number);
        total += w;
      }
      for (let d = 0; d < m; d++) expect(got[d]).toBeCloseTo((want[d] as number) / total, 5);
      expect(got[m]).toBe(logit > 0 ? 1 : -1);
    }
    // A new episode starts with no history: its first action is the first prediction's first.
    inst.reset({ task: "t", seed: 1, policySeed: 0 });
    expect(Array.from(inst.act(frames[3] as (typeof frames)[number]))).toEqual(
      Array.from(rt.predict(frames[3] as (typeof frames)[number]).slice(0, cfg.actionDim)),
    );
    rt.dispose();
    await expect(tinyVlaPolicy.load({ extra: { ensemble: -1 } })).rejects.toThrow(
      /ensemble must be a number >= 0/,
    );
    await expect(tinyVlaPolicy.load({ extra: { ensemble: 0.01, replan: 2 } })).rejects.toThrow(
      /replan or ensemble, not both/,
    );
  });

  it("latch=1 keeps a closed gripper closed until the rest of its chunk says open", async () => {
    const rt = await TinyVlaRuntime.create({
      config: cfg,
      text: tok,
      weights: initWeights(cfg, Rng.fromLabel("latch")),
    });
    // Chunks of 4 steps whose gripper signs are set here: a grasp, a chunk shaped like a new
    // grasp while it carries the object (open, open, close, close), a release at the basket.
    const A = cfg.actionDim;
    const grips = [
      [-1, -1, 1, 1],
      [-1, -1, 1, 1],
      [1, 1, -1, -1],
      [-1, -1, -1, -1],
    ];
    let call = 0;
    const real = rt.predict.bind(rt);
    rt.predict = (obs, anchor) => {
      const chunk = real(obs, anchor);
      const signs = grips[call++ % grips.length] as number[];
      for (let k = 0; k < cfg.chunk; k++) chunk[k * A + A - 1] = signs[k] as number;
      return chunk;
    };
    const obs = syntheticScene("latch").obs;
    const play = (inst: TinyVlaInstance) => {
      call = 0;
      inst.reset({ task: "t", seed: 0, policySeed: 0 });
      return Array.from({ length: 16 }, () => inst.act(obs)[A - 1]);
    };
    expect(play(new TinyVlaInstance(rt, "sha256:test", 4))).toEqual([
      -1, -1, 1, 1, -1, -1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1,
    ]);
    // Latched: the two open steps of the second chunk stay closed; the release passes.
    expect(play(new TinyVlaInstance(rt, "sha256:test", 4, undefined, true))).toEqual([
      -1, -1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1,
    ]);
    rt.dispose();
    await expect(tinyVlaPolicy.load({ extra: { latch: 2 } })).rejects.toThrow(
      /latch must be 1 or 0/,
    );
    await expect(tinyVlaPolicy.load({ extra: { latch: 1, ensemble: 0.01 } })).rejects.toThrow(
      /latch or ensemble, not both/,
    );
  });

  /** The network anchored on a small locator, for the locator's tests. */
  const withLocator = {
    ...cfg,
    auxMode: "anchored" as const,
    auxToHead: true,
    auxMean: [0, 0],
    auxScale: [1, 1],
    locator: { size: 32, patch: 2, dim: 8, hidden: 16 },
  };

  it("trains a locator that finds the object from pixels and words, leaving the network alone", async () => {
    const c = withLocator;
    const set = syntheticLocatorSet(tok, 120, 32);
    const base = initWeights(c, Rng.fromLabel("locator-base"));
    const { weights, history } = await trainLocator(set, c, base, {
      seed: 0,
      steps: 90,
      batchSize: 16,
      logEvery: 30,
      learningRate: 1e-2,
    });
    expect(history.length).toBe(3);
    expect(history[2]?.loss as number).toBeLessThan(0.8 * (history[0]?.loss as number));
    for (const [name, w] of base) {
      if (name.startsWith("locator.")) expect(weights.get(name)).not.toEqual(w);
      else expect(weights.get(name)).toBe(w);
    }
    const rt = await TinyVlaRuntime.create({ config: c, text: tok, weights });
    const where = rt.localise(syntheticScene("locator").obs);
    expect(where.length).toBe(2);
    expect(Array.from(where).every(Number.isFinite)).toBe(true);
    rt.dispose();
  });

  it("a locator given the view's context starts unchanged and learns what a patch alone cannot", async () => {
    const base = withLocator;
    const ctx = { ...base, locator: { ...base.locator, context: true } };
    // Added with zero weights (as `train --init --locator-context` does), nothing moves.
    const plain = initWeights(base, Rng.fromLabel("context-base"));
    const added = completeWeights(ctx, plain, Rng.fromLabel("other"));
    expect([...(added.get("locator.context.w") as Float32Array)].every((v) => v === 0)).toBe(true);
    const obs = syntheticScene("context").obs;
    const a = await TinyVlaRuntime.create({ config: base, text: tok, weights: plain });
    const b = await TinyVlaRuntime.create({ config: ctx, text: tok, weights: added });
    expect(Array.from(b.localise(obs))).toEqual(Array.from(a.localise(obs)));
    a.dispose();
    b.dispose();
    // Half the samples carry a corner tile that moves the answer to the other block: only the
    // locator that sees the whole view fits them.
    const set = syntheticTriggerSet(tok, 96, 32);
    const trainOn = async (c: TinyVlaConfig) =>
      (
        await trainLocator(set, c, initWeights(c, Rng.fromLabel("trigger")), {
          seed: 0,
          steps: 120,
          batchSize: 16,
          logEvery: 30,
          learningRate: 1e-2,
        })
      ).history;
    const without = await trainOn(base);
    const withContext = await trainOn(ctx);
    const last = (h: { loss: number }[]) => h[h.length - 1]?.loss as number;
    expect(last(withContext)).toBeLessThan(0.7 * last(without));
  });

  it("a locator whose map reads the view places the point by what it looked at, not by the words", async () => {
    const view = { ...withLocator, locator: { ...withLocator.locator, map: "view" as const } };
    const w = initWeights(view, Rng.fromLabel("map-view"));
    expect(w.get("locator.map.0.w")?.length).toBe((2 + 8) * 16);
    // With the query's words weighed at zero, where it looks no longer depends on the words:
    // the map reading the view then gives one position for two sentences, the word-reading
    // map two.
    const mute = (c: TinyVlaConfig) => {
      const m = new Map(initWeights(c, Rng.fromLabel("map-view")));
      m.set("locator.query.w", new Float32Array((m.get("locator.query.w") as Float32Array).length));
      return m;
    };
    const { obs } = syntheticScene("map-view");
    const at = async (c: TinyVlaConfig) => {
      const rt = await TinyVlaRuntime.create({ config: c, text: tok, weights: mute(c) });
      const a = Array.from(rt.localise({ ...obs, instruction: "pick up the red block" }));
      const b = Array.from(rt.localise({ ...obs, instruction: "pick up the blue block" }));
      rt.dispose();
      return { a, b };
    };
    const seen = await at(view);
    expect(seen.a).toEqual(seen.b);
    // Its parts, as diagnosis reads them: the same answer, and no second look to move it.
    const rt = await TinyVlaRuntime.create({ config: view, text: tok, weights: w });
    const parts = rt.locateParts(obs);
    expect(Array.from(parts.world)).toEqual(Array.from(rt.localise(obs)));
    expect(Array.from(parts.mapped)).toEqual(Array.from(parts.world));
    expect(parts.point.length).toBe(2);
    expect(Array.from(parts.point).every((v) => Math.abs(v) <= 1)).toBe(true);
    rt.dispose();
    const said = await at(withLocator);
    expect(said.a).not.toEqual(said.b);
    // And it trains as the word-reading map does.
    const { history } = await trainLocator(syntheticLocatorSet(tok, 120, 32), view, w, {
      seed: 0,
      steps: 90,
      batchSize: 16,
      logEvery: 30,
      learningRate: 1e-2,
    });
    expect(history[2]?.loss as number).toBeLessThan(0.8 * (history[0]?.loss as number));
  });

  it("a locator's second look starts as no move, trains alone and sharpens the position", async () => {
    const base = withLocator;
    const set = syntheticLocatorSet(tok, 120, 32);
    const trained = (
      await trainLocator(set, base, initWeights(base, Rng.fromLabel("refine-base")), {
        seed: 0,
        steps: 60,
        batchSize: 16,
        learningRate: 1e-2,
      })
    ).weights;
    const looked = { ...base, locator: { ...base.locator, refine: { radius: 1, hidden: 8 } } };
    const added = completeWeights(looked, trained, Rng.fromLabel("other"));
    expect([...(added.get("locator.refine.out.w") as Float32Array)].every((v) => v === 0)).toBe(
      true,
    );
    const obs = syntheticScene("refine").obs;
    const a = await TinyVlaRuntime.create({ config: base, text: tok, weights: trained });
    const b = await TinyVlaRuntime.create({ config: looked, text: tok, weights: added });
    expect(Array.from(b.localise(obs))).toEqual(Array.from(a.localise(obs)));
    a.dispose();
    b.dispose();
    const read: number[] = [];
    const { weights, history } = await trainSecondLook(set, looked, added, {
      seed: 1,
      steps: 90,
      batchSize: 16,
      logEvery: 30,
      learningRate: 1e-2,
      onRead: (done) => read.push(done),
    });
    // Each sample read once (no phrasings drawn), in batches of 32.
    expect(read[read.length - 1]).toBe(120);
    // Everything but the second look is the trained locator's, to the array.
    for (const [name, w] of added) {
      if (name.startsWith("locator.refine.")) expect(weights.get(name)).not.toEqual(w);
      else expect(weights.get(name)).toBe(w);
    }
    expect(history[2]?.loss as number).toBeLessThan(history[0]?.loss as number);
    // The folded weights read raw inputs: the set's error through the whole locator is the
    // last steps' training loss, not that of a network fed unstandardised rows.
    const tf = await tfReady();
    const error = (w: Weights) =>
      tf.tidy(() => {
        const { count, size } = patchGrid(locatorConfig(looked));
        const patches = new Float32Array(set.count * count * size);
        const layout = textLayoutOf(looked, set.text);
        const texts = emptyInputs(layout, set.count);
        const L = layout.slots * layout.perWord;
        const S = set.size * set.size * 3;
        const target = new Float32Array(set.count * 2);
        for (let i = 0; i < set.count; i++) {
          patchify(
            locatorConfig(looked),
            set.images.subarray(i * S, (i + 1) * S),
            patches,
            i * count * size,
          );
          inputInto(layout, set.tokens.subarray(i * L, (i + 1) * L), texts, i);
          for (let k = 0; k < 2; k++) {
            target[i * 2 + k] =
              ((set.world[i * 2 + k] as number) - (looked.auxMean?.[k] ?? 0)) /
              (looked.auxScale[k] as number);
          }
        }
        const out = locatorOutputs(
          tf,
          toTensors(tf, looked, w),
          tf.tensor3d(patches, [set.count, count, size]),
          textTensor(tf, looked, texts, set.count),
          looked,
        );
        return tf
          .mean(tf.square(tf.sub(out.world, tf.tensor2d(target, [set.count, 2]))))
          .dataSync()[0] as number;
      });
    const last = history[history.length - 1]?.loss as number;
    expect(error(weights)).toBeLessThan(0.9 * error(added));
    expect(Math.abs(error(weights) - last) / last).toBeLessThan(0.25);
    await expect(trainSecondLook(set, base, trained, { seed: 0, steps: 1 })).rejects.toThrow(
      /no second look/,
    );
    // Stopped while the held locator reads: nothing trained, the weights given back as they were.
    const stop = new AbortController();
    const stopped = await trainSecondLook(set, looked, added, {
      seed: 1,
      steps: 90,
      signal: stop.signal,
      onRead: () => stop.abort(),
    });
    expect(stopped.stepsDone).toBe(0);
    expect(stopped.weights).toBe(added);
  });

  it("keeps the locator's soft-argmax near its best patch with local=R", async () => {
    const tf = await tfReady();
    // Two peaks on a 4 x 4 grid: the best at (0, 0), the other at (3, 3).
    const scores = new Float32Array(16).fill(0);
    scores[0] = 5;
    scores[15] = 4.5;
    const kept = tf.tidy(
      () => nearPeak(tf, tf.tensor2d(scores, [1, 16]), 4, 1).dataSync() as Float32Array,
    );
    const near = [0, 1, 4, 5];
    for (let i = 0; i < 16; i++) {
      if (near.includes(i)) expect(kept[i]).toBe(scores[i]);
      else expect(kept[i]).toBe(-1e9);
    }
    // The policy option sets it on the shipped model's config; bad values are refused.
    const inst = (await tinyVlaPolicy.load({ extra: { local: "2" } })) as TinyVlaInstance;
    expect(inst.runtime.config.locator?.local).toBe(2);
    inst.close();
    await expect(tinyVlaPolicy.load({ extra: { local: -1 } })).rejects.toThrow(
      /local must be an integer in 0\.\.31/,
    );
    await expect(tinyVlaPolicy.load({ extra: { local: 1.5 } })).rejects.toThrow(/local must be/);
  });

  it("gives finite, non-zero pixel gradients and a query that leaves the chunk alone", async () => {
    const rt = await TinyVlaRuntime.create({
      config: cfg,
      text: tok,
      weights: initWeights(cfg, Rng.fromLabel("grad")),
    });
    const inst = new TinyVlaInstance(rt, "sha256:test", 2);
    const { obs } = syntheticScene("grad");
    const { value, grad } = await inst.differentiable.inputGradient(obs, "agentview", [1, 0.5, 0]);
    expect(grad.length).toBe(128 * 128 * 3);
    expect(grad.every(Number.isFinite)).toBe(true);
    expect(grad.some((v) => v !== 0)).toBe(true);
    expect(Number.isFinite(value)).toBe(true);
    // The value is the first action's translation (unclipped) dotted with the direction.
    const a0 = rt.predict(obs);
    if (Math.abs(a0[0] as number) < 1 && Math.abs(a0[1] as number) < 1)
      expect(value).toBeCloseTo((a0[0] as number) + 0.5 * (a0[1] as number), 4);

    inst.reset({ task: "t", seed: 0, policySeed: 0 });
    const first = inst.act(obs);
    const other = syntheticScene("other").obs;
    inst.query(other);
    const second = inst.act(other);
    // With replan 2 the second step still comes from the first chunk, query or not.
    expect(Array.from(second)).toEqual(Array.from(rt.predict(obs).slice(7, 14)));
    expect(first.length).toBe(7);
    inst.close();
  });

  it("differentiates through the locator until the episode's anchor is fixed", async () => {
    const c: TinyVlaConfig = {
      ...cfg,
      auxMode: "anchored",
      auxToHead: true,
      auxMean: [0, 0],
      auxScale: [0.2, 0.2],
      locator: { size: 32, patch: 2, dim: 8, hidden: 16, offset: true },
    };
    // A briefly trained locator: an untrained one barely depends on the pixels.
    const { weights } = await trainLocator(
      syntheticLocatorSet(tok, 60, 32),
      c,
      initWeights(c, Rng.fromLabel("through-locator")),
      { seed: 0, steps: 60, batchSize: 16, learningRate: 1e-2 },
    );
    const rt = await TinyVlaRuntime.create({ config: c, text: tok, weights });
    const inst = new TinyVlaInstance(rt, "sha256:test", 4);
    const { obs } = syntheticScene("through-locator");
    const dir: [number, number, number] = [0.6, -0.8, 0];
    const img = obs.images.agentview as Image;
    const through = await inst.differentiable.inputGradient(obs, "agentview", dir);
    const fixed = rt.inputGradient(obs, "agentview", dir, rt.localise(obs));
    expect(through.value).toBeCloseTo(fixed.value, 5);
    const viaAnchor = through.grad.map((g, i) => g - (fixed.grad[i] as number));
    const largest = viaAnchor.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    expect(largest).toBeGreaterThan(1e-7);
    // First-order check of the anchor path: moving the pixels along it moves the value (with
    // the locator re-run on the moved pixels) by about the predicted amount.
    const data = Uint8Array.from(img.data, (v, i) =>
      Math.max(0, Math.min(255, v + 2 * Math.sign(viaAnchor[i] as number))),
    );
    const moved = { ...obs, images: { ...obs.images, agentview: { ...img, data } } };
    const predicted = viaAnchor.reduce(
      (s, g, i) => s + g * ((data[i] as number) - (img.data[i] as number)),
      0,
    );
    const total = through.grad.reduce(
      (s, g, i) => s + g * ((data[i] as number) - (img.data[i] as number)),
      0,
    );
    const after = rt.inputGradient(moved, "agentview", dir).value;
    expect(predicted).toBeGreaterThan(0);
    expect(after - through.value).toBeGreaterThan(0.5 * total);
    expect(after - through.value).toBeLessThan(1.5 * total);
    // and the part that came through the anchor is the anchor path's prediction.
    const sameAnchor = rt.inputGradient(moved, "agentview", dir, rt.localise(obs)).value;
    expect(after - sameAnchor).toBeGreaterThan(0.5 * predicted);
    expect(after - sameAnchor).toBeLessThan(1.5 * predicted);
    // Once the policy has acted, the anchor is a constant for the gradient as for the policy.
    inst.reset({ task: "t", seed: 0, policySeed: 0 });
    inst.act(obs);
    const later = await inst.differentiable.inputGradient(obs, "agentview", dir);
    expect(Array.from(later.grad)).toEqual(Array.from(fixed.grad));
    rt.dispose();
  });

  it("splits the locator's heatmap target bilinearly around the object's point", () => {
    const side = 8;
    for (const [u, v] of [
      [0.37, 0.61],
      [0.5, 0.5],
      [0.9, 0.2],
    ] as const) {
      const out = new Float32Array(side * side);
      heatmapTarget(u, v, side, "bilinear", out);
      expect(out.reduce((s, w) => s + w, 0)).toBeCloseTo(1, 6);
      let eu = 0;
      let ev = 0;
      out.forEach((w, k) => {
        eu += (w * ((k % side) + 0.5)) / side;
        ev += (w * (Math.floor(k / side) + 0.5)) / side;
      });
      expect(eu).toBeCloseTo(u, 5);
      expect(ev).toBeCloseTo(v, 5);
    }
    const cell = new Float32Array(side * side);
    heatmapTarget(0.37, 0.61, side, "cell", cell);
    expect(cell[4 * side + 2]).toBe(1);
    heatmapTarget(1.2, 0.5, side, "bilinear", cell);
    expect(cell.reduce((s, w) => s + w, 0)).toBe(1);
  });

  it("weight edits change the output and restoring them brings it back bit-exactly", async () => {
    const rt = await TinyVlaRuntime.create({
      config: cfg,
      text: tok,
      weights: initWeights(cfg, Rng.fromLabel("flip")),
    });
    const inst = new TinyVlaInstance(rt, "sha256:test", 1);
    const { obs } = syntheticScene("flip");
    const before = inst.query(obs);
    const tensors = inst.weights.weightTensors();
    const head = tensors.find((t) => t.name === "head.out.b");
    expect(head).toBeDefined();
    const data = head?.data as Float32Array;
    const saved = data.slice();
    // Flip the top exponent bit of the first bias: a huge value.
    const bits = new Uint32Array(data.buffer, data.byteOffset, data.length);
    bits[0] = (bits[0] as number) ^ 0x40000000;
    inst.weights.weightsChanged();
    const flipped = inst.query(obs);
    expect(Array.from(flipped)).not.toEqual(Array.from(before));
    data.set(saved);
    inst.weights.weightsChanged();
    expect(Array.from(inst.query(obs))).toEqual(Array.from(before));
    inst.close();
  });
});
