/**
 * A RATE as every report states it: counts, the point estimate and its 95% Wilson interval (and
 * the anytime-valid one where asked). Its own module so that what only needs a rate (the
 * regression gate, the viewer's page) does not load the plugin registries `build.ts` reads.
 */

import type { Rate } from "../stats/index.js";
import { rate } from "../stats/rate.js";

export const CONFIDENCE = 0.95;
export const ALPHA = 0.05;
/** Fewer seeds than this make a run preliminary (protocol v2). */
export const MIN_SEEDS = 5;

/** A RATE: counts, the point estimate (null when n = 0) and its Wilson interval. */
export function makeRate(successes: number, n: number, withAnytime = false): Rate {
  return rate(successes, n, { confidence: CONFIDENCE, anytime: withAnytime, alpha: ALPHA });
}
