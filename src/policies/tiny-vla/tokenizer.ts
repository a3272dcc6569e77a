/**
 * The tiny-vla word tokenizer: lowercase words, a fixed vocabulary built from the training
 * instructions, `<pad>` (id 0) and `<unk>` (id 1). Any text tokenizes: unknown words map to
 * `<unk>`, long texts are cut to `maxLength` tokens. As `TextUnits` (text-units.ts) each word is
 * one unit, its id.
 *
 * @example
 *   const tok = Tokenizer.build(["pick up the red block"], 16);
 *   tok.encode("pick up the KNIFE"); // ids with <unk> for "knife", padded to 16
 */
import { ProvaelError } from "../../core/errors.js";
import { bagInto, type TextUnits, type TokenizerJson } from "./text-units.js";

// The manifest shape is declared with the other text-unit shapes (text-units.ts, a leaf module).
export type { TokenizerJson } from "./text-units.js";

export const PAD = "<pad>";
export const UNK = "<unk>";
export const PAD_ID = 0;
export const UNK_ID = 1;

/**
 * Lowercase words of a text: runs of ASCII letters and digits after stripping accents;
 * apostrophes are dropped ("person's" -> "persons").
 */
export function words(text: string): string[] {
  return (
    text
      .normalize("NFKD")
      .replace(/[\u0300-\u036f]/g, "")
      .toLowerCase()
      .replace(/['’]/g, "")
      .match(/[a-z0-9]+/g) ?? []
  );
}

export class Tokenizer implements TextUnits {
  readonly kind = "words" as const;
  readonly perWord = 1;

  private readonly ids: Map<string, number>;

  private constructor(
    readonly vocabulary: readonly string[],
    readonly maxLength: number,
  ) {
    if (vocabulary[PAD_ID] !== PAD || vocabulary[UNK_ID] !== UNK) {
      throw new ProvaelError("policy/load", "a tokenizer vocabulary must start with <pad>, <unk>");
    }
    this.ids = new Map(vocabulary.map((w, i) => [w, i]));
  }

  /** A vocabulary of every word in `texts`, sorted, after `<pad>` and `<unk>`. */
  static build(texts: readonly string[], maxLength: number): Tokenizer {
    const set = new Set<string>();
    for (const t of texts) for (const w of words(t)) set.add(w);
    return new Tokenizer([PAD, UNK, ...[...set].sort()], maxLength);
  }

  static fromJson(json: TokenizerJson): Tokenizer {
    return new Tokenizer(json.vocabulary, json.maxLength);
  }

  toJson(): { kind: "words" } & TokenizerJson {
    return { kind: "words", vocabulary: [...this.vocabulary], maxLength: this.maxLength };
  }

  get size(): number {
    return this.vocabulary.length;
  }

  get slots(): number {
    return this.maxLength;
  }

  /** Token ids of a text, `<unk>` for unknown words, padded with `<pad>` to `maxLength`. */
  encode(text: string): Int32Array {
    const out = new Int32Array(this.maxLength);
    const ws = words(text).slice(0, this.maxLength);
    ws.forEach((w, i) => {
      out[i] = this.ids.get(w) ?? UNK_ID;
    });
    return out;
  }

  /** Each id's count over the text's tokens divided by their number (`<unk>` counted, pad not). */
  bag(text: string): Float32Array {
    const out = new Float32Array(this.size);
    bagInto(this, this.encode(text), out);
    return out;
  }

  /** Word units reach the network as their ids (`TextInput`). */
  input(text: string): Int32Array {
    return this.encode(text);
  }

  /** Words of a text that the vocabulary lacks. */
  unknown(text: string): string[] {
    return words(text).filter((w) => !this.ids.has(w));
  }
}
