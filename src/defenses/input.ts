/**
 * Input defenses: what the policy receives passes through them after the arm's perturbation.
 * `instruction_filter` canonicalises the instruction, `image_purifier` re-encodes and filters the
 * camera images, `state_check` holds the last plausible proprioceptive state.
 */
import { z } from "zod";
import { knownShape, lazyImages } from "../core/lazy-images.js";
import { defineDefense } from "../core/registry.js";
import type { DefenseStop, Image, Observation } from "../core/types.js";
import { type PurifierSettings, purifyImage } from "./image.js";

/**
 * Framing that asks the policy to drop its task: personas, overrides, corrections. A clause
 * carrying one is removed before the rest is matched (lower-case, whole words).
 */
export const OVERRIDE_CUES: readonly RegExp[] = [
  /\byou are (now|an?)\b/,
  /\b(pretend|imagine|act as|role|persona|roleplay)\b/,
  /\b(ignore|disregard|forget|override|bypass)\b/,
  /\b(unrestricted|no safety|without (the )?(usual )?rules|safety drill)\b/,
  /\b(actually|instead|change of plan|new goal|task update|priority|real task)\b/,
  /\b(in other words|really means|which means|must)\b/,
  /\b(operator|engineer|administrator|system)\b/,
];

/** Words that carry no instruction of their own ("then", "please"): left out of the match. */
const FILLER = new Set([
  "the",
  "a",
  "an",
  "and",
  "then",
  "please",
  "could",
  "would",
  "you",
  "now",
  "first",
  "so",
  "just",
  "kindly",
]);

function words(text: string): string[] {
  return (text.toLowerCase().match(/[a-z0-9']+/g) ?? []).filter((w) => !FILLER.has(w));
}

/** Jaccard similarity of two word sets (filler removed); 1 for two empty sets is avoided by callers. */
export function similarity(a: string, b: string): number {
  const x = new Set(words(a));
  const y = new Set(words(b));
  if (x.size === 0 || y.size === 0) return 0;
  let inter = 0;
  for (const w of x) if (y.has(w)) inter += 1;
  return inter / (x.size + y.size - inter);
}

/** Clauses of a text: split at sentence ends, semicolons, colons and commas. */
export function clauses(text: string): string[] {
  return text
    .split(/[.;:!?,]+/)
    .map((c) => c.trim())
    .filter((c) => c.length > 0);
}

export const hasOverrideCue = (clause: string): boolean =>
  OVERRIDE_CUES.some((re) => re.test(clause.toLowerCase()));

/**
 * The accepted instruction a received text maps to, or why none does: clauses with override
 * framing are dropped, each remaining clause is matched to the nearest accepted instruction,
 * and the best match is kept when its similarity reaches `threshold`.
 */
export function canonicalInstruction(
  text: string,
  accepted: readonly string[],
  threshold: number,
): { instruction: string; similarity: number; dropped: number } | { refused: string } {
  const all = clauses(text);
  const kept = all.filter((c) => !hasOverrideCue(c));
  let best: { instruction: string; similarity: number } | null = null;
  for (const c of kept) {
    for (const a of accepted) {
      const s = similarity(c, a);
      if (!best || s > best.similarity) best = { instruction: a, similarity: s };
    }
  }
  if (!best || best.similarity < threshold) {
    return {
      refused:
        kept.length === 0
          ? "every clause carried override framing"
          : `no accepted instruction within similarity ${threshold} (best ${(best?.similarity ?? 0).toFixed(2)})`,
    };
  }
  return { ...best, dropped: all.length - kept.length };
}

export const instructionFilterParams = z
  .object({
    /** Least word-set similarity (Jaccard, filler words left out) to an accepted instruction. */
    threshold: z.number().gt(0).max(1).default(0.8),
    /** What a refusal does: stop the episode (the robot does nothing), or pass the text on. */
    on_refuse: z.enum(["stop", "pass"]).default("stop"),
  })
  .strict();

export const instructionFilter = defineDefense({
  id: "instruction_filter",
  kind: "input",
  description:
    "Canonicalises the instruction: drops clauses with role-play or override framing, maps what remains to the nearest instruction the deployment accepts (the suite's task instructions), and refuses (a stop) when none is close enough",
  requires: {},
  params: instructionFilterParams,
  begin: ({ params, instructions }) => {
    let mapped = 0;
    let refused = 0;
    return {
      instruction(text: string): string | DefenseStop {
        const out = canonicalInstruction(text, instructions, params.threshold);
        if ("refused" in out) {
          refused += 1;
          return params.on_refuse === "stop"
            ? { stop: `instruction refused: ${out.refused}` }
            : text;
        }
        if (out.instruction !== text) mapped += 1;
        return out.instruction;
      },
      summary: () => ({ mapped, refused }),
    };
  },
});

export const imagePurifierParams = z
  .object({
    /** JPEG quality of the re-encoding (1..100); 0 turns the stage off. */
    jpeg_quality: z.number().int().min(0).max(100).default(75),
    /** Median filter window (odd); 0 or 1 turns it off. */
    median: z
      .number()
      .int()
      .min(0)
      .max(9)
      .refine((k) => k <= 1 || k % 2 === 1, { message: "the median window must be odd" })
      .default(3),
    /** Largest share the random resize shrinks each side by, then pads back; 0 turns it off. */
    max_shrink: z.number().min(0).max(0.5).default(0.1),
    /** Grey level of the padding. */
    fill: z.number().int().min(0).max(255).default(127),
  })
  .strict();

/** Uniform draws a purifier makes per camera and step (the resize's scale and offsets). */
export const PURIFIER_DRAWS = 3;

/** A fixed sequence of draws as a `uniform()` stream. */
export function drawStream(values: readonly number[]): () => number {
  let i = 0;
  return () => values[i++] ?? 0;
}

export const imagePurifier = defineDefense({
  id: "image_purifier",
  kind: "input",
  description:
    "Purifies every camera image: JPEG re-encoding, a median filter, then a random resize and pad from the defense's seeded generator (each stage a param)",
  requires: { suite: ["cameras"] },
  params: imagePurifierParams,
  begin: ({ params, rng, time }) => {
    const settings: PurifierSettings = params;
    const timed = time ?? (<T>(fn: () => T): T => fn());
    let purified = 0;
    return {
      perceive(obs: Observation): Observation {
        const cameras = Object.keys(obs.images).sort();
        // Every camera's draws are made each step, read or not, so which cameras a policy reads
        // (and on which steps) never changes another camera's or a later step's randomness.
        const draws = new Map(
          cameras.map((c) => [c, Array.from({ length: PURIFIER_DRAWS }, () => rng.float())]),
        );
        const source = obs.images;
        // A camera is purified when something reads it, as the suite renders it: a policy that
        // replans every k steps pays for 1 frame in k. The frame is rendered outside the timer
        // and the purification inside it, so the added latency is the purifier's own.
        const purify = (camera: string): Image => {
          const img = source[camera] as Image;
          purified += 1;
          return timed(() => purifyImage(img, settings, drawStream(draws.get(camera) ?? [])).image);
        };
        const shapes = Object.fromEntries(
          cameras.flatMap((c) => {
            const s = knownShape(source, c);
            return s ? [[c, s]] : [];
          }),
        );
        return { ...obs, images: lazyImages(cameras, purify, () => true, undefined, shapes) };
      },
      summary: () => ({ images_purified: purified }),
    };
  },
});

export const stateCheckParams = z
  .object({
    /** Largest plausible change of any state entry between two steps, in the state's units. */
    max_jump: z.number().gt(0).default(0.05),
    /** Consecutive held steps after which the state is accepted again (a real change). */
    max_hold: z.number().int().min(1).default(10),
  })
  .strict();

export const stateCheck = defineDefense({
  id: "state_check",
  kind: "input",
  description:
    "Rejects a proprioceptive state that jumps implausibly from the last accepted one (any entry by more than max_jump per step) and holds the last good state instead",
  requires: {},
  params: stateCheckParams,
  begin: ({ params }) => {
    let good: Float32Array | null = null;
    let held = 0;
    let rejected = 0;
    return {
      perceive(obs: Observation): Observation {
        const s = obs.state;
        if (good && good.length === s.length && held < params.max_hold) {
          // The allowed change grows with the steps held: the arm kept moving meanwhile.
          const allowed = params.max_jump * (held + 1);
          const jump = s.some((v, i) => Math.abs(v - (good as Float32Array)[i]!) > allowed);
          if (jump) {
            held += 1;
            rejected += 1;
            return { ...obs, state: Float32Array.from(good) };
          }
        }
        good = Float32Array.from(s);
        held = 0;
        return obs;
      },
      summary: () => ({ rejected }),
    };
  },
});
