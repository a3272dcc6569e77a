/**
 * How tiny-vla reads an instruction: a text encoder turns it into unit ids (`slots` words of
 * `perWord` units each, 0 for padding), and the network takes the mean of their embeddings:
 * from the ids themselves for word units (v1's one-hot masked mean, in v1's order of
 * operations), from their normalised bag for subword units, a float vector of `size` (one entry
 * per unit id) embedded by one matrix multiply (`TextInput`). Two encoders
 * implement it: the v1 word `Tokenizer` (one unit per word, its vocabulary id) and the
 * `SubwordEncoder` (each word's own hashed id and its hashed character n-grams).
 *
 * The bag weights every word equally: a word's units share the word's weight 1 equally (k units:
 * 1/k each), then the bag is divided by the number of words. For the word tokenizer (k = 1) that
 * is the count of each id over the text divided by the number of non-pad tokens, so bag x embed
 * is the masked mean of the word embeddings that v1 computed, up to float rounding (a matmul sums
 * in id order, v1 in word order): word units therefore reach the network as ids, which keeps the
 * shipped model's outputs to the bit.
 *
 * @example
 *   const units: TextUnits = Tokenizer.build(["pick up the mug"], 16);
 *   units.bag("pick up the mug"); // Float32Array(units.size), 1/4 at each word's id
 */

export type TextUnitsKind = "words" | "subword";

/** The v1 word tokenizer as the weights manifest records it (tokenizer.ts). */
export interface TokenizerJson {
  vocabulary: string[];
  maxLength: number;
}

/** The subword encoder's settings (subword.ts). */
export interface SubwordConfig {
  /** Hash buckets, id 0 (padding) included. */
  buckets: number;
  /** Shortest and longest character n-gram (of the word with its end markers). */
  minN: number;
  maxN: number;
  /** Words kept from a text; later ones are cut. */
  maxWords: number;
  /** Units kept per word: the word's own id first, then its n-grams, shortest first. */
  perWord: number;
}

/** The shape of an encoder's ids: enough to turn them into bags (training sets carry it). */
export interface TextLayout {
  readonly kind: TextUnitsKind;
  /** Width of a bag: every unit id, padding (0) included. */
  readonly size: number;
  /** Words kept from a text (later ones are cut). */
  readonly slots: number;
  /** Unit ids per word. */
  readonly perWord: number;
}

/** What each encoder records in the weights manifest to be rebuilt. */
export type TextUnitsJson =
  | ({ kind: "words" } & TokenizerJson)
  | ({ kind: "subword" } & SubwordConfig);

/**
 * What the network reads of a text: word units as their ids ([slots] int32, embedded by the
 * one-hot masked mean v1 computes, so the shipped weights give v1's bytes), subword units as
 * their bag ([size] float32, one matmul). Both are the same mean of unit embeddings; the ids
 * path keeps v1's order of operations, which a bag matmul cannot (it sums in id order).
 */
export type TextInput = Int32Array | Float32Array | WordSequences;

/**
 * Texts as their words in order, for a network that reads each word in its context
 * (`TinyVlaConfig.textContext`) rather than the text's bag: `index` gives, for each of `rows`
 * texts, each slot's word as a row of `bags()` (0: no word), and `bags()` holds each distinct
 * word's own bag (its units at 1/k each, as `bagInto` weighs them) once. A batch of 64
 * instructions says a few hundred distinct words, so embedding those (one [words, size] x
 * [size, width] product) and picking rows by a one-hot product costs a fraction of embedding
 * every slot's bag, and needs no `tf.gather`, which the WASM backend cannot train.
 */
export class WordSequences {
  readonly index: Int32Array;
  private readonly rowsOf = new Map<string, number>();
  private readonly words: Float32Array[] = [];

  constructor(
    readonly layout: TextLayout,
    readonly rows: number,
  ) {
    this.index = new Int32Array(rows * layout.slots);
  }

  /** Distinct words held (the bags' rows, less the empty row 0). */
  get distinct(): number {
    return this.words.length;
  }

  /**
   * Writes text `row` from its ids (`slots` x `perWord`). Writing row 0 starts a new batch: the
   * distinct words are forgotten (every training loop fills its rows from 0 in order). `drop`
   * as in `bagInto`: a dropped known word reads as `<unk>` (word units), a dropped subword word
   * leaves its slot empty.
   */
  setRow(row: number, ids: ArrayLike<number>, drop?: () => boolean): void {
    const { slots, perWord, kind, size } = this.layout;
    if (row === 0) {
      this.rowsOf.clear();
      this.words.length = 0;
    }
    for (let s = 0; s < slots; s++) {
      const base = s * perWord;
      const units: number[] = [];
      for (let u = 0; u < perWord; u++) {
        const id = ids[base + u] as number;
        if (id !== 0) units.push(id);
      }
      let slot = 0;
      if (units.length > 0) {
        if (kind === "words") units[0] = wordAfterDropout(units[0] as number, drop);
        else if (drop?.()) units.length = 0;
      }
      if (units.length > 0) {
        const key = units.join(",");
        let at = this.rowsOf.get(key);
        if (at === undefined) {
          const bag = new Float32Array(size);
          const share = kind === "words" ? 1 : 1 / units.length;
          for (const id of kind === "words" ? units.slice(0, 1) : units)
            bag[id] = (bag[id] as number) + share;
          this.words.push(bag);
          at = this.words.length;
          this.rowsOf.set(key, at);
        }
        slot = at;
      }
      this.index[row * slots + s] = slot;
    }
  }

  /**
   * [distinct + 1, size] word bags, row 0 (no word) all zero; two zero rows when no text has a
   * word (a one-hot pick needs a depth of two).
   */
  bags(): Float32Array {
    const { size } = this.layout;
    const out = new Float32Array((Math.max(1, this.words.length) + 1) * size);
    this.words.forEach((b, k) => {
      out.set(b, (k + 1) * size);
    });
    return out;
  }
}

export interface TextUnits extends TextLayout {
  /** `slots` x `perWord` unit ids of a text (row-major), 0 where a word or unit is absent. */
  encode(text: string): Int32Array;
  /** The normalised bag of a text (`size` floats; all 0 for a text with no words). */
  bag(text: string): Float32Array;
  /** The network's input for a text (`TextInput`: ids for words, the bag for subword). */
  input(text: string): TextInput;
  /** Words of a text the encoder has nothing learned for (words: not in the vocabulary). */
  unknown(text: string): string[];
  toJson(): TextUnitsJson;
}

/** The layout alone (for training sets and caches). */
export function unitsLayout(units: TextLayout): TextLayout {
  return { kind: units.kind, size: units.size, slots: units.slots, perWord: units.perWord };
}

/** Id of `<unk>` in the word tokenizer (tokenizer.ts; repeated to keep this module leaf). */
const WORDS_UNK_ID = 1;

/** Word dropout on one word id: a known word (not pad or `<unk>`) asks `drop`, and may read as `<unk>`. */
function wordAfterDropout(id: number, drop: (() => boolean) | undefined): number {
  return drop && id > WORDS_UNK_ID && drop() ? WORDS_UNK_ID : id;
}

/**
 * Writes the bag of one text's ids (`slots` x `perWord`, as `encode` gives them) into `out` at
 * `offset` (`size` floats, overwritten). `drop`, when given, is asked about every word that can
 * be dropped and returns whether to drop it (word dropout in training): a word tokenizer's word
 * then reads as `<unk>` (known words only, as v1 did), a subword word leaves the text (it has no
 * `<unk>`: an unseen word still has its n-grams, so dropping is what "no usable word" means).
 */
export function bagInto(
  layout: TextLayout,
  ids: ArrayLike<number>,
  out: Float32Array,
  offset = 0,
  drop?: () => boolean,
): void {
  const { size, slots, perWord, kind } = layout;
  out.fill(0, offset, offset + size);
  let words = 0;
  for (let s = 0; s < slots; s++) {
    const base = s * perWord;
    let k = 0;
    for (let u = 0; u < perWord; u++) if ((ids[base + u] as number) !== 0) k++;
    if (k === 0) continue;
    if (kind === "words") {
      const id = wordAfterDropout(ids[base] as number, drop);
      out[offset + id] = (out[offset + id] as number) + 1;
      words++;
      continue;
    }
    if (drop?.()) continue;
    const share = 1 / k;
    for (let u = 0; u < perWord; u++) {
      const id = ids[base + u] as number;
      if (id !== 0) out[offset + id] = (out[offset + id] as number) + share;
    }
    words++;
  }
  if (words > 1) {
    const inv = 1 / words;
    for (let i = offset; i < offset + size; i++) out[i] = (out[i] as number) * inv;
  }
}

/** Length of one text's network input: `slots` ids (words) or a `size`-wide bag (subword). */
export function inputWidth(layout: TextLayout): number {
  return layout.kind === "words" ? layout.slots * layout.perWord : layout.size;
}

/**
 * A zeroed batch of `n` network inputs of the layout's kind, or of word sequences (`sequence`:
 * a network with `textContext`).
 */
export function emptyInputs(layout: TextLayout, n: number, sequence = false): TextInput {
  if (sequence) return new WordSequences(layout, n);
  const width = inputWidth(layout);
  return layout.kind === "words" ? new Int32Array(n * width) : new Float32Array(n * width);
}

/**
 * Writes one text's network input from its ids into `out` at row `row`: the ids themselves for
 * word units (a dropped known word becomes `<unk>`, drawing `drop` as `bagInto` does), the bag
 * for subword units, the words in order for word sequences (`WordSequences.setRow`).
 */
export function inputInto(
  layout: TextLayout,
  ids: ArrayLike<number>,
  out: TextInput,
  row: number,
  drop?: () => boolean,
): void {
  if (out instanceof WordSequences) {
    out.setRow(row, ids, drop);
    return;
  }
  const width = inputWidth(layout);
  if (layout.kind !== "words") {
    bagInto(layout, ids, out as Float32Array, row * width, drop);
    return;
  }
  for (let s = 0; s < width; s++) out[row * width + s] = wordAfterDropout(ids[s] as number, drop);
}

/** The id rows of several texts, one after another (`slots` x `perWord` each). */
export function encodeAll(units: TextUnits, texts: readonly string[]): Int32Array {
  const width = units.slots * units.perWord;
  const out = new Int32Array(texts.length * width);
  texts.forEach((t, k) => {
    out.set(units.encode(t), k * width);
  });
  return out;
}
