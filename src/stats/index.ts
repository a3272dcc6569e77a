/**
 * Provael's statistics: pure functions, no I/O, no hidden randomness (the bootstrap draws from the
 * project generator under a caller-given seed). See docs/statistics.md for what each number means.
 */
export { type AnytimeOptions, anytimeInterval, anytimeLogMartingale } from "./anytime.js";
export { benjaminiHochberg } from "./benjamini-hochberg.js";
export {
  type ClusterBootstrapOptions,
  type ClusterCounts,
  clusterBootstrapInterval,
  type7Quantile,
} from "./bootstrap.js";
export { fisherExactGreater } from "./fisher.js";
export { holm } from "./holm.js";
export { mcnemarExact, mcnemarExactGreater } from "./mcnemar.js";
export { normalQuantile } from "./normal.js";
export { newcombePairedDifference, type PairedTable } from "./paired.js";
export {
  type AnytimeRateInterval,
  type ClusteredRateInterval,
  type Rate,
  type RateOptions,
  rate,
  type WilsonRateInterval,
} from "./rate.js";
export {
  logBeta,
  logBinomial,
  logBinomialPmf,
  logGamma,
  stirlingRemainder,
} from "./special.js";
export type { Interval } from "./types.js";
export { type WilsonOptions, wilsonInterval } from "./wilson.js";
