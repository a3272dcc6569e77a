/**
 * Writing a tiny-vla weight directory (Node only: training and merging write weights; playing
 * reads them through weights.ts, which a page can load too).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Digest, sha256 } from "../../core/digest.js";
import type { TinyVlaConfig, Weights } from "./model.js";
import type { TextUnits } from "./text-units.js";
import {
  MANIFEST_FILE,
  MANIFEST_SCHEMA,
  type Manifest,
  WEIGHTS_FILE,
  weightBytes,
} from "./weights.js";

/** Writes weights.bin and manifest.json into `dir`; returns the digest. */
export function saveWeights(
  dir: string,
  model: {
    config: TinyVlaConfig;
    text: TextUnits;
    weights: Weights;
    training?: Record<string, unknown>;
  },
): Digest {
  const { bytes, entries } = weightBytes(model.config, model.weights);
  const digest = sha256(bytes);
  const units = model.text.toJson();
  const manifest: Manifest = {
    schema: MANIFEST_SCHEMA,
    digest,
    parameters: bytes.byteLength / 4,
    config: model.config,
    // Word models keep v1's manifest exactly, so older readers load them.
    ...(units.kind === "words"
      ? { tokenizer: { vocabulary: units.vocabulary, maxLength: units.maxLength } }
      : { textUnits: units }),
    weights: entries,
    training: model.training ?? {},
  };
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, WEIGHTS_FILE), bytes);
  writeFileSync(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
  return digest;
}
