/**
 * The text units of tiny-vla v2: each word becomes its own hashed id plus the hashed ids of its
 * character n-grams (of `<word>`, the brackets marking its ends), so a word never seen in
 * training still shares units with the words it resembles ("fetching" with "fetch", "mugs" with
 * "mug") where the v1 vocabulary gave it `<unk>`. Ids are buckets of a 32-bit FNV-1a hash; id 0
 * is padding. As `TextUnits` (text-units.ts) a word's units share its weight equally, so the
 * model's bag x embed averages a word's unit embeddings into the word's vector, then the words.
 *
 * @example
 *   const enc = new SubwordEncoder({ buckets: 2048, minN: 3, maxN: 5, maxWords: 24, perWord: 16 });
 *   enc.encode("pick up the mug"); // maxWords x perWord ids, 0 where padded
 */
import { ProvaelError } from "../../core/errors.js";
import { bagInto, type SubwordConfig, type TextUnits } from "./text-units.js";
import { words } from "./tokenizer.js";

// The config is declared with the other text-unit shapes (text-units.ts, a leaf module).
export type { SubwordConfig } from "./text-units.js";

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a over the UTF-16 code units of `s` (the words are ASCII after `words`). */
function fnv1a(s: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, FNV_PRIME) >>> 0;
  }
  return h >>> 0;
}

export class SubwordEncoder implements TextUnits {
  readonly kind = "subword" as const;

  constructor(readonly config: SubwordConfig) {
    const { buckets, minN, maxN, maxWords, perWord } = config;
    const ok =
      Number.isInteger(buckets) &&
      buckets >= 2 &&
      Number.isInteger(minN) &&
      Number.isInteger(maxN) &&
      minN >= 1 &&
      maxN >= minN &&
      Number.isInteger(maxWords) &&
      maxWords >= 1 &&
      Number.isInteger(perWord) &&
      perWord >= 1;
    if (!ok) {
      throw new ProvaelError("policy/load", "tiny-vla subword config is invalid", {
        details: { ...config },
        hint: "buckets >= 2, 1 <= minN <= maxN, maxWords >= 1 and perWord >= 1, all integers",
      });
    }
  }

  static fromJson(json: SubwordConfig): SubwordEncoder {
    const { buckets, minN, maxN, maxWords, perWord } = json;
    return new SubwordEncoder({ buckets, minN, maxN, maxWords, perWord });
  }

  toJson(): { kind: "subword" } & SubwordConfig {
    const { buckets, minN, maxN, maxWords, perWord } = this.config;
    return { kind: "subword", buckets, minN, maxN, maxWords, perWord };
  }

  get size(): number {
    return this.config.buckets;
  }

  get slots(): number {
    return this.config.maxWords;
  }

  get perWord(): number {
    return this.config.perWord;
  }

  /** Each word's units at 1/(its unit count), divided by the number of words. */
  bag(text: string): Float32Array {
    const out = new Float32Array(this.size);
    bagInto(this, this.encode(text), out);
    return out;
  }

  /** Subword units reach the network as their bag (`TextInput`). */
  input(text: string): Float32Array {
    return this.bag(text);
  }

  /** Nothing: every word has units (its n-grams), seen in training or not. */
  unknown(_text: string): string[] {
    return [];
  }

  /** The bucket of one unit: 1..buckets-1 (0 is padding). */
  private id(unit: string): number {
    return 1 + (fnv1a(unit) % (this.config.buckets - 1));
  }

  /** The units of one word: the word itself (marked as whole), then its n-grams in order. */
  units(word: string): string[] {
    const marked = `<${word}>`;
    const out = [`w:${word}`];
    for (let n = this.config.minN; n <= this.config.maxN; n++)
      for (let i = 0; i + n <= marked.length; i++) out.push(marked.slice(i, i + n));
    return out.slice(0, this.config.perWord);
  }

  /** `maxWords` x `perWord` unit ids of a text (row-major), 0 where a word or unit is absent. */
  encode(text: string): Int32Array {
    const { maxWords, perWord } = this.config;
    const out = new Int32Array(maxWords * perWord);
    words(text)
      .slice(0, maxWords)
      .forEach((w, i) => {
        this.units(w).forEach((u, k) => {
          out[i * perWord + k] = this.id(u);
        });
      });
    return out;
  }
}
