/**
 * The pre-flight check: before any episode, the loaded policy is compared with the suite it is
 * about to play (cameras, image size, state and action dimensions), and each arm's attack with
 * what the pair offers. A pairing that cannot play one episode is refused; an arm whose attack
 * needs what the pair lacks is N/A, with its reason, never 0.
 */
import { ProvaelError } from "../core/errors.js";
import type { PolicyCapabilities, Suite } from "../core/types.js";

export { notApplicableReason } from "../kernel/applicability.js";

/** What the policy needs and the suite does not give, one sentence each (empty: they fit). */
export function pairingProblems(
  policyId: string,
  policy: PolicyCapabilities,
  suite: Pick<Suite, "id" | "capabilities" | "actionSpace">,
): string[] {
  const problems: string[] = [];
  const s = suite.capabilities;
  const missing = policy.camerasOptional
    ? []
    : policy.cameras.filter((c) => !s.cameras.includes(c));
  if (missing.length > 0) {
    problems.push(
      `${policyId} reads camera(s) ${missing.map((c) => `'${c}'`).join(", ")}; ${suite.id} renders ${s.cameras.length > 0 ? s.cameras.map((c) => `'${c}'`).join(", ") : "no camera"}`,
    );
  }
  if (policy.imageSize && s.imageSize && policy.cameras.length > 0) {
    const a = policy.imageSize;
    const b = s.imageSize;
    if (a.width !== b.width || a.height !== b.height) {
      problems.push(
        `${policyId} needs ${a.width}x${a.height} images; ${suite.id} renders ${b.width}x${b.height}`,
      );
    }
  }
  if (policy.readsState && policy.stateDim !== undefined && s.stateDim < policy.stateDim) {
    problems.push(
      `${policyId} reads a state of ${policy.stateDim} values; ${suite.id} gives ${s.stateDim}`,
    );
  }
  if (policy.actionDim !== suite.actionSpace.dim) {
    problems.push(
      `${policyId} acts in ${policy.actionDim} dimensions; ${suite.id} takes ${suite.actionSpace.dim}`,
    );
  }
  return problems;
}

/** Refuses a policy and suite that cannot play one episode together (exit 2, before any episode). */
export function checkPairing(
  policyId: string,
  policy: PolicyCapabilities,
  suite: Pick<Suite, "id" | "capabilities" | "actionSpace">,
  builtFor: string[],
): void {
  const problems = pairingProblems(policyId, policy, suite);
  if (problems.length === 0) return;
  throw new ProvaelError(
    "config/incompatible",
    `${policyId} cannot play ${suite.id}: ${problems.join("; ")}`,
    {
      details: { policy: policyId, suite: suite.id, problems },
      hint:
        builtFor.length > 0
          ? `${policyId} was built for ${builtFor.join(", ")}: pass --suite ${builtFor[0]}, or choose another --policy (provael list-policies)`
          : "choose a suite that gives what the policy reads (provael list-suites), or another --policy",
    },
  );
}
