/**
 * The text encoders tiny-vla can be trained with, by name, and the one a weights manifest or a
 * training-set cache records, rebuilt from its JSON.
 *
 * @example
 *   const units = buildTextUnits("subword", instructions, 16);
 *   textUnitsFromJson(units.toJson()); // the same encoder
 */
import { ProvaelError } from "../../core/errors.js";
import { type SubwordConfig, SubwordEncoder } from "./subword.js";
import type { TextUnits, TextUnitsJson, TextUnitsKind } from "./text-units.js";
import { Tokenizer } from "./tokenizer.js";

export const TEXT_UNITS_KINDS: readonly TextUnitsKind[] = ["words", "subword"];

/**
 * The subword units `provael train tiny-vla --text-units subword` uses: 2,048 buckets (a
 * 2,048 x 64 text embedding, 131k parameters, about half the v1 model's size again), 3- to
 * 5-grams, 64 words, 24 units per word (a word and all its n-grams up to 10 letters). The words
 * are a bag, so a longer limit costs only the encoding of each new instruction; 64 holds every
 * phrasing of both grammar splits (35 words at most for tabletop) and the long texts of the
 * instruction attacks (a roleplay frame around the task), which a VLA reads whole: a limit cut
 * to the training phrasings would drop the hazard word at the end of a long attack.
 */
export const DEFAULT_SUBWORD: SubwordConfig = {
  buckets: 2048,
  minN: 3,
  maxN: 5,
  maxWords: 64,
  perWord: 24,
};

export function textUnitsFromJson(json: TextUnitsJson): TextUnits {
  if (json.kind === "words") return Tokenizer.fromJson(json);
  if (json.kind === "subword") return SubwordEncoder.fromJson(json);
  throw new ProvaelError(
    "policy/load",
    `unknown tiny-vla text units '${(json as { kind: unknown }).kind}'`,
    { hint: `expected one of ${TEXT_UNITS_KINDS.join(", ")}` },
  );
}

/**
 * An encoder for a training set's instructions: words (a vocabulary of every word in `texts`,
 * cut at `maxTokens`) or subword units (`subword`, default `DEFAULT_SUBWORD`; nothing to learn
 * from the texts).
 */
export function buildTextUnits(
  kind: TextUnitsKind,
  texts: readonly string[],
  maxTokens: number,
  subword: SubwordConfig = DEFAULT_SUBWORD,
): TextUnits {
  return kind === "subword" ? new SubwordEncoder(subword) : Tokenizer.build(texts, maxTokens);
}
