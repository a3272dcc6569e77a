/**
 * The offline study's measurements, as pure functions of action vectors: the benign envelope
 * (per-dimension order statistics of the policy's benign actions on the calibration part), the
 * one-step exit test, the normalised divergence between two actions, and agreement with the
 * recorded action. No I/O and no randomness.
 */
import { ProvaelError } from "../../core/errors.js";
import { conformalRank, minConformalN } from "../../stats/conformal.js";
import { type7Quantile } from "../../stats/index.js";

/** A box over the scored dimensions of the one-step command. */
export interface Envelope {
  method: "per-dimension-order-statistic";
  /** The false-positive target for the whole box (every dimension together). */
  target_fpr: number;
  /** Per tail and dimension: target / (2 × dims) (a union bound makes the box's rate ≤ target). */
  tail_level: number;
  /** Calibration frames it was fitted on. */
  n: number;
  /** Rank k of the order statistic: low is the k-th largest-from-below, high the k-th smallest. */
  rank: number;
  dims: number[];
  low: number[];
  high: number[];
}

/**
 * Fits the envelope on calibration commands (one row per frame, already restricted to `dims`
 * positions in order). Per dimension and tail, the bound is the split-conformal order statistic
 * at level β = target / (2D): high = the k-th smallest value, k = ⌈(n+1)(1−β)⌉, low = the k-th
 * largest, so a new exchangeable benign command leaves either side with probability ≤ β and the
 * box with probability ≤ target. A dimension whose bounds coincide (no benign spread) is refused:
 * every other value would leave it, an exit rate of 100% by construction.
 */
export function fitEnvelope(
  rows: readonly Float64Array[],
  dims: readonly number[],
  targetFpr: number,
): Envelope {
  const D = dims.length;
  const beta = targetFpr / (2 * D);
  const n = rows.length;
  // No spread at all is refused whatever the sample size: no bound could be fitted there.
  const flat = dims.filter((_, j) => {
    const v = rows.map((r) => r[j] as number);
    return v.length > 0 && Math.min(...v) === Math.max(...v);
  });
  if (flat.length > 0) throw zeroWidth(flat);
  const rank = conformalRank(n, beta);
  if (rank === null) {
    throw new ProvaelError(
      "calibration/too-few-scenes",
      `the envelope needs at least ${minConformalN(beta)} calibration frames for a ${targetFpr} false-positive target over ${D} dimensions, the calibration part has ${n}`,
      {
        details: { n, needed: minConformalN(beta), target_fpr: targetFpr, dims },
        hint: "select more frames (a smaller --stride or more episodes), fewer --dims, or a larger --target-fpr",
      },
    );
  }
  const low: number[] = [];
  const high: number[] = [];
  const zero: number[] = [];
  dims.forEach((d, j) => {
    const sorted = rows.map((r) => r[j] as number).sort((a, b) => a - b);
    const lo = sorted[n - rank] as number;
    const hi = sorted[rank - 1] as number;
    if (!(hi > lo)) zero.push(d);
    low.push(lo);
    high.push(hi);
  });
  if (zero.length > 0) throw zeroWidth(zero);
  return {
    method: "per-dimension-order-statistic",
    target_fpr: targetFpr,
    tail_level: beta,
    n,
    rank,
    dims: [...dims],
    low,
    high,
  };
}

function zeroWidth(dims: number[]): ProvaelError {
  return new ProvaelError(
    "calibration/degenerate",
    `the benign actions do not vary on dimension(s) ${dims.join(", ")}: a zero-width envelope there would count every other value as an exit (100% by construction)`,
    {
      details: { dims },
      hint: "leave those dimensions out of the plan (--dims) or use a policy whose benign actions vary there",
    },
  );
}

/** The dimensions (plan numbering) on which a command leaves the envelope; empty when inside. */
export function exits(env: Envelope, command: ArrayLike<number>): number[] {
  const out: number[] = [];
  env.dims.forEach((d, j) => {
    const v = command[d] as number;
    if (v < (env.low[j] as number) || v > (env.high[j] as number)) out.push(d);
  });
  return out;
}

/** |a − b| / scale per dimension of `dims`, and their L2 norm. */
export function divergence(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  dims: readonly number[],
  scale: readonly number[],
): { per_dim: number[]; l2: number } {
  const per = dims.map((d) => Math.abs((a[d] as number) - (b[d] as number)) / (scale[d] as number));
  return { per_dim: per, l2: Math.sqrt(per.reduce((s, x) => s + x * x, 0)) };
}

/** Median, p95 and mean of non-negative values (type-7 quantiles, as numpy's default). */
export function summary(values: readonly number[]): {
  n: number;
  median: number | null;
  p95: number | null;
  mean: number | null;
} {
  if (values.length === 0) return { n: 0, median: null, p95: null, mean: null };
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: values.length,
    median: type7Quantile(sorted, 0.5),
    p95: type7Quantile(sorted, 0.95),
    mean: values.reduce((s, x) => s + x, 0) / values.length,
  };
}
