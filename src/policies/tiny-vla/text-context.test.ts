import { describe, expect, it } from "vitest";
import { Rng } from "../../core/rng.js";
import { tfReady } from "./backend.js";
import {
  defaultConfig,
  initWeights,
  readText,
  TEXT_CONTEXT,
  type TinyVlaConfig,
  textTensor,
  toTensors,
  weightShapes,
} from "./model.js";
import { SubwordEncoder } from "./subword.js";
import { encodeAll, WordSequences } from "./text-units.js";
import { Tokenizer } from "./tokenizer.js";

const STATS = { stateMean: [], stateStd: [], actionScale: [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1] };

// A toy language where the target is the first object named and a distractor clause names
// another: "pick up the X" / "pick up the X and leave the Y alone" / "leave the Y alone and
// pick up the X". A bag of the words of "pick up the knife and leave the cup alone" is the
// bag of "pick up the cup and leave the knife alone": only word order tells them apart.
const OBJECTS = ["cup", "knife", "block", "bowl", "can", "ball"];
function sentence(rng: Rng): { text: string; target: number } {
  const t = rng.int(OBJECTS.length);
  let d = rng.int(OBJECTS.length - 1);
  if (d >= t) d++;
  const x = OBJECTS[t] as string;
  const y = OBJECTS[d] as string;
  const shape = rng.int(3);
  const text =
    shape === 0
      ? `pick up the ${x}`
      : shape === 1
        ? `pick up the ${x} and leave the ${y} alone`
        : `leave the ${y} alone and pick up the ${x}`;
  return { text, target: t };
}

describe("tiny-vla text context (word-by-word reading)", () => {
  const enc = new SubwordEncoder({ buckets: 512, minN: 3, maxN: 4, maxWords: 12, perWord: 8 });

  it("keeps each distinct word once and indexes the slots, dropping words where told", () => {
    const seq = new WordSequences(enc, 2);
    seq.setRow(0, enc.encode("pick up the cup"));
    seq.setRow(1, enc.encode("the cup and the bowl"));
    // pick, up, the, cup, and, bowl
    expect(seq.distinct).toBe(6);
    expect(Array.from(seq.index.subarray(0, 5))).toEqual([1, 2, 3, 4, 0]);
    expect(Array.from(seq.index.subarray(12, 18))).toEqual([3, 4, 5, 3, 6, 0]);
    const bags = seq.bags();
    expect(bags.length).toBe(7 * enc.size);
    // Row 0 is empty; each word's bag sums to 1 (its units share the word's weight).
    expect(bags.subarray(0, enc.size).every((v) => v === 0)).toBe(true);
    const sum = bags.subarray(enc.size, 2 * enc.size).reduce((a, b) => a + b, 0);
    expect(sum).toBeCloseTo(1, 6);
    // Writing row 0 again starts a new batch.
    seq.setRow(0, enc.encode("bowl"));
    expect(seq.distinct).toBe(1);
    // Dropout empties a subword slot; word units read a dropped word as <unk>.
    seq.setRow(0, enc.encode("pick up the cup"), () => true);
    expect(Array.from(seq.index.subarray(0, 4))).toEqual([0, 0, 0, 0]);
    const tok = Tokenizer.build(["pick up the cup"], 8);
    const words = new WordSequences(tok, 1);
    words.setRow(0, tok.encode("pick up the cup"), () => true);
    expect(words.distinct).toBe(1);
  });

  it("reads a text the same whatever else is in its batch, and sees word order", async () => {
    const tf = await tfReady();
    const cfg: TinyVlaConfig = defaultConfig(enc.size, STATS, {
      textDim: 16,
      textContext: TEXT_CONTEXT,
      maxTokens: enc.slots,
    });
    expect(weightShapes(cfg).map(([n]) => n)).toEqual(
      expect.arrayContaining(["text.ctx.w", "text.ctx.b", "text.attend.w"]),
    );
    const w = toTensors(tf, cfg, initWeights(cfg, Rng.fromLabel("ctx-test")));
    const read = (texts: string[]): Float32Array => {
      const seq = new WordSequences(enc, texts.length);
      texts.forEach((t, r) => {
        seq.setRow(r, enc.encode(t));
      });
      return tf
        .tidy(() => {
          const W = (n: string) => w[n] as import("./backend.js").tf.Tensor;
          return readText(tf, textTensor(tf, cfg, seq, texts.length), W, "text", cfg);
        })
        .dataSync() as Float32Array;
    };
    const width = TEXT_CONTEXT.heads * 16;
    const a = "pick up the knife and leave the cup alone";
    const b = "pick up the cup and leave the knife alone";
    const alone = read([a]);
    const inBatch = read([b, "bowl", a]).subarray(2 * width, 3 * width);
    for (let k = 0; k < width; k++) expect(inBatch[k]).toBeCloseTo(alone[k] as number, 5);
    const swapped = read([b]);
    const diff = alone.reduce((s, v, k) => s + Math.abs(v - (swapped[k] as number)), 0);
    expect(diff).toBeGreaterThan(1e-3);
    // A text with no words reads as zeros (every slot masked).
    expect(read([""]).every((v) => v === 0)).toBe(true);
  });

  it("learns which object is the target where a bag of the same units is at chance", async () => {
    const tf = await tfReady();
    const train = async (context: boolean): Promise<number> => {
      const cfg: TinyVlaConfig = defaultConfig(enc.size, STATS, {
        textDim: 16,
        maxTokens: enc.slots,
        ...(context ? { textContext: { hidden: 16, heads: 1 } } : {}),
      });
      const init = initWeights(cfg, Rng.fromLabel("ctx-learn"));
      const names = [
        "text.embed",
        ...(context ? ["text.ctx.w", "text.ctx.b", "text.attend.w"] : []),
      ];
      const shapes = new Map(weightShapes(cfg));
      const vars: Record<string, import("./backend.js").tf.Variable> = {};
      for (const n of names)
        vars[n] = tf.variable(tf.tensor(init.get(n) as Float32Array, shapes.get(n)));
      const head = tf.variable(tf.randomNormal([16, OBJECTS.length], 0, 0.1, "float32", 7));
      const opt = tf.train.adam(0.03);
      const rng = Rng.fromLabel("ctx-learn:data");
      const batch = (n: number) => {
        const items = Array.from({ length: n }, () => sentence(rng));
        const input = context
          ? (() => {
              const seq = new WordSequences(enc, n);
              items.forEach((s, r) => {
                seq.setRow(r, enc.encode(s.text));
              });
              return seq;
            })()
          : (() => {
              const bags = new Float32Array(n * enc.size);
              items.forEach((s, r) => {
                bags.set(enc.bag(s.text), r * enc.size);
              });
              return bags;
            })();
        return { input, labels: items.map((s) => s.target) };
      };
      const W = (n: string) => vars[n] as import("./backend.js").tf.Tensor;
      for (let step = 0; step < 150; step++) {
        const { input, labels } = batch(32);
        tf.tidy(() => {
          opt.minimize(() => {
            const text = readText(tf, textTensor(tf, cfg, input, 32), W, "text", cfg);
            const logits = tf.matMul(text, head);
            return tf.losses.softmaxCrossEntropy(
              tf.oneHot(tf.tensor1d(labels, "int32"), OBJECTS.length),
              logits,
            ) as import("./backend.js").tf.Scalar;
          });
        });
      }
      const { input, labels } = batch(200);
      const pred = tf.tidy(() =>
        tf.argMax(
          tf.matMul(readText(tf, textTensor(tf, cfg, input, 200), W, "text", cfg), head),
          1,
        ),
      );
      const got = pred.dataSync();
      pred.dispose();
      for (const v of Object.values(vars)) v.dispose();
      head.dispose();
      return labels.filter((l, k) => got[k] === l).length / labels.length;
    };
    const withContext = await train(true);
    const bag = await train(false);
    // Two thirds of the sentences carry a distractor clause: a bag can get the first third and
    // half of the rest (2/3 at best); the context reader all of them.
    expect(withContext).toBeGreaterThan(0.95);
    expect(bag).toBeLessThan(0.8);
  }, 120_000);

  it("encodes a batch of texts into word sequences like row by row", () => {
    const texts = ["pick up the cup", "leave the bowl alone"];
    const ids = encodeAll(enc, texts);
    const seq = new WordSequences(enc, 2);
    seq.setRow(0, ids.subarray(0, enc.slots * enc.perWord));
    seq.setRow(1, ids.subarray(enc.slots * enc.perWord));
    expect(seq.distinct).toBe(7);
  });
});
