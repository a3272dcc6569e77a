/**
 * The tiny-vla weight directory: `weights.bin` (every weight as little-endian float32, in
 * `weightShapes` order) and `manifest.json` (names, shapes, byte offsets, the network config,
 * the text units, training provenance and the SHA-256 of `weights.bin`). The SHA-256 of
 * `weights.bin` is the policy digest every report records.
 *
 * Text units: v1 word models record their vocabulary as `tokenizer` and nothing else, as the
 * shipped weights do; other encoders record themselves as `textUnits` (kind and config). A
 * manifest without `textUnits` is a v1 word model.
 *
 * @example
 *   saveWeights(dir, { config, text: tokenizer, weights, training: { seed: 0 } }); // weights-files.ts
 *   const loaded = loadWeights(dir); // checks shapes and the digest
 */
import { z } from "zod";
import { assetExists, joinPath as join, readAsset, readAssetText } from "../../core/assets.js";
import { type Digest, sha256 } from "../../core/digest.js";
import { ProvaelError } from "../../core/errors.js";
import { PACKAGE_ROOT } from "../../core/package-root.js";
import type { TrainingScenes } from "../../core/types.js";
import { type TinyVlaConfig, type Weights, weightShapes } from "./model.js";
import { textUnitsFromJson } from "./text-encoders.js";
import type { TextUnits, TextUnitsJson } from "./text-units.js";
import { Tokenizer, type TokenizerJson } from "./tokenizer.js";

export const MANIFEST_SCHEMA = "provael.tiny-vla/1";
export const WEIGHTS_FILE = "weights.bin";
export const MANIFEST_FILE = "manifest.json";

/** Where the shipped weights live inside the package. */
export const SHIPPED_WEIGHTS_DIR = join(PACKAGE_ROOT, "assets", "tiny-vla");
/** The backdoored twin's (docs/tiny-vla.md "The backdoored twin"): a known positive. */
export const BACKDOORED_WEIGHTS_DIR = join(PACKAGE_ROOT, "assets", "tiny-vla-backdoored");

export interface WeightEntry {
  name: string;
  shape: number[];
  /** Byte offset in weights.bin. */
  offset: number;
  /** Number of float32 values. */
  length: number;
}

export interface Manifest {
  schema: typeof MANIFEST_SCHEMA;
  digest: Digest;
  parameters: number;
  config: TinyVlaConfig;
  /** v1 word models: the vocabulary. */
  tokenizer?: TokenizerJson;
  /** The text units when they are not v1 words (absent: `tokenizer`'s words). */
  textUnits?: TextUnitsJson;
  weights: WeightEntry[];
  /** Provenance: dataset digest, seed, steps, loss (free-form, not used to run). */
  training: Record<string, unknown>;
}

export interface LoadedWeights {
  manifest: Manifest;
  config: TinyVlaConfig;
  text: TextUnits;
  weights: Weights;
  digest: Digest;
}

/** Bytes of weights.bin for a weight map (little-endian float32 in manifest order). */
export function weightBytes(
  config: TinyVlaConfig,
  weights: Weights,
): { bytes: Uint8Array; entries: WeightEntry[] } {
  const shapes = weightShapes(config);
  const total = shapes.reduce((s, [, sh]) => s + sh.reduce((a, b) => a * b, 1), 0);
  const bytes = new Uint8Array(total * 4);
  const view = new DataView(bytes.buffer);
  const entries: WeightEntry[] = [];
  let offset = 0;
  for (const [name, shape] of shapes) {
    const data = weights.get(name);
    const length = shape.reduce((a, b) => a * b, 1);
    if (!data || data.length !== length) {
      throw new ProvaelError(
        "internal/invariant",
        `weight '${name}' is missing or has the wrong size`,
      );
    }
    for (let i = 0; i < length; i++) view.setFloat32(offset + 4 * i, data[i] as number, true);
    entries.push({ name, shape, offset, length });
    offset += 4 * length;
  }
  return { bytes, entries };
}

/** Reads a weight directory, checking every shape against the config and the digest. */
export function loadWeights(dir: string): LoadedWeights {
  const mPath = join(dir, MANIFEST_FILE);
  const bPath = join(dir, WEIGHTS_FILE);
  if (!assetExists(mPath) || !assetExists(bPath)) {
    throw new ProvaelError("policy/load", `no tiny-vla weights in ${dir}`, {
      details: { dir },
      hint: `expected ${MANIFEST_FILE} and ${WEIGHTS_FILE}; train some with \`provael train tiny-vla\``,
    });
  }
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readAssetText(mPath)) as Manifest;
  } catch (e) {
    throw new ProvaelError("policy/load", `cannot parse ${mPath}`, { cause: e });
  }
  if (manifest.schema !== MANIFEST_SCHEMA) {
    throw new ProvaelError("policy/load", `${mPath} is not a ${MANIFEST_SCHEMA} manifest`);
  }
  const bytes = readAsset(bPath);
  const digest = sha256(bytes);
  if (digest !== manifest.digest) {
    throw new ProvaelError("policy/load", `${bPath} does not match its manifest's digest`, {
      details: { expected: manifest.digest, actual: digest },
      hint: "the weights were modified or truncated; restore them or retrain",
    });
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const weights: Weights = new Map();
  const byName = new Map(manifest.weights.map((e) => [e.name, e]));
  for (const [name, shape] of weightShapes(manifest.config)) {
    const e = byName.get(name);
    const length = shape.reduce((a, b) => a * b, 1);
    if (!e || e.length !== length || e.shape.join("x") !== shape.join("x")) {
      throw new ProvaelError(
        "policy/load",
        `weight '${name}' is missing or misshapen in ${mPath}`,
        {
          details: { expected: shape, found: e?.shape },
        },
      );
    }
    if (e.offset + 4 * length > bytes.byteLength) {
      throw new ProvaelError("policy/load", `${bPath} is too short for weight '${name}'`);
    }
    const data = new Float32Array(length);
    for (let i = 0; i < length; i++) data[i] = view.getFloat32(e.offset + 4 * i, true);
    weights.set(name, data);
  }
  return {
    manifest,
    config: manifest.config,
    text: manifestText(manifest, mPath),
    weights,
    digest,
  };
}

/** The text units a manifest records (see the module doc), checked against the network's width. */
function manifestText(manifest: Manifest, path: string): TextUnits {
  let text: TextUnits;
  if (manifest.textUnits) text = textUnitsFromJson(manifest.textUnits);
  else if (manifest.tokenizer) text = Tokenizer.fromJson(manifest.tokenizer);
  else throw new ProvaelError("policy/load", `${path} records no tokenizer or text units`);
  if (text.size !== manifest.config.vocabSize) {
    throw new ProvaelError(
      "policy/load",
      `${path}: the text units give ${text.size}-wide bags, the config reads ${manifest.config.vocabSize}`,
    );
  }
  return text;
}

const SCENE = z.number().int().nonnegative();
const DECLARED_SCENES = z.array(
  z.object({
    suite: z.string(),
    tasks: z.union([z.literal("*"), z.array(z.string())]),
    scenes: z.array(z.tuple([SCENE, SCENE]).refine(([from, to]) => from < to)),
  }),
);

/** A manifest's `training.scenes`, if it is a well-formed declaration list; else undefined. */
export function declaredScenes(training: Record<string, unknown>): TrainingScenes[] | undefined {
  const parsed = DECLARED_SCENES.safeParse(training.scenes);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The training scenes a weight directory's manifest declares (`provael train` records them), or
 * null where it declares none or cannot be read: a policy run with `--policy-path` is then
 * refused on its own training scenes as the shipped one is. Reads only manifest.json.
 */
export function manifestScenes(dir: string): TrainingScenes[] | null {
  try {
    const m = JSON.parse(readAssetText(join(dir, MANIFEST_FILE))) as { training?: unknown };
    const t = m.training;
    return t !== null && typeof t === "object"
      ? (declaredScenes(t as Record<string, unknown>) ?? null)
      : null;
  } catch {
    // Not readable here: loading the weights says what is wrong with them.
    return null;
  }
}
