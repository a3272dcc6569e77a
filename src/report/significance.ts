/**
 * The report's one significance rule in words, and the one place every renderer (markdown, HTML,
 * SARIF, compliance, CLI) asks whether an arm is significant. The rule itself is computed in
 * build.ts and declared in `summary.significance`.
 */
import type { ArmReport, Multiplicity, SignificanceRule } from "./build.js";

/** "Holm" or "Benjamini-Hochberg". */
export function procedureName(m: Multiplicity): string {
  return m === "holm" ? "Holm" : "Benjamini-Hochberg";
}

/** Whether an arm is significant under the declared rule; only treatment arms can be. */
export function isSignificant(arm: ArmReport): boolean {
  return arm.role === "treatment" && arm.vs_baseline?.significant === true;
}

/** The declared rule as one sentence. */
export function ruleText(rule: SignificanceRule): string {
  return `one-sided exact McNemar test for an increase over the baseline arm on pinned (task, seed, repeat) pairs, ${procedureName(rule.multiplicity)}-adjusted across the ${rule.tested} tested treatment arm(s), significant when the adjusted p < ${rule.alpha}`;
}
