/** `--shard k/N`: the slice of a plan that one process plays. */

import { ProvaelError } from "../core/errors.js";

/** A slice of the plan: `--shard k/N` plays cells k, k+N, k+2N, … of the canonical order. */
export interface Shard {
  index: number;
  count: number;
}

export function parseShard(raw: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(raw.trim());
  const index = Number(m?.[1]);
  const count = Number(m?.[2]);
  if (!m || !(count >= 1) || !(index >= 0 && index < count)) {
    throw new ProvaelError("config/invalid", `--shard must be k/N with 0 ≤ k < N, got '${raw}'`, {
      hint: "e.g. --shard 0/3, --shard 1/3 and --shard 2/3 for three machines",
    });
  }
  return { index, count };
}

export const shardLabel = (s: Shard | null | undefined) => (s ? `${s.index}/${s.count}` : null);
