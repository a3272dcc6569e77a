/**
 * Whether an arm can run against a policy and a suite (benchmark): each attack requirement
 * once, how a pair's capabilities answer it and what it is in words. An arm whose attack needs
 * what the pair lacks is N/A, with its reason, never 0: decided the same way whoever plays it.
 */
import type {
  Attack,
  POLICY_REQUIREMENTS,
  PolicyCapabilities,
  SUITE_REQUIREMENTS,
  SuiteCapabilities,
} from "../core/types.js";

type PolicyNeed = (typeof POLICY_REQUIREMENTS)[number];
type SuiteNeed = (typeof SUITE_REQUIREMENTS)[number];

/**
 * Each requirement once: how a pair's capabilities answer it, and what it is in words (the N/A
 * reason a report prints). Typed by the requirement lists, so a new requirement cannot be added
 * without saying how it is read.
 */
const POLICY_NEEDS: Record<PolicyNeed, { has: (p: PolicyCapabilities) => boolean; says: string }> =
  {
    cameras: { has: (p) => p.cameras.length > 0, says: "reads camera images" },
    readsState: { has: (p) => Boolean(p.readsState), says: "reads the robot state" },
    readsContext: {
      has: (p) => Boolean(p.readsContext),
      says: "reads a context channel (tool descriptions, notes)",
    },
    differentiable: {
      has: (p) => Boolean(p.differentiable),
      says: "exposes input gradients (white-box)",
    },
    weights: { has: (p) => Boolean(p.weights), says: "exposes its weight tensors" },
    queryable: {
      has: (p) => Boolean(p.queryable),
      says: "answers side-effect-free queries (black-box search)",
    },
  };
const SUITE_NEEDS: Record<SuiteNeed, { has: (s: SuiteCapabilities) => boolean; says: string }> = {
  cameras: { has: (s) => s.cameras.length > 0, says: "renders camera images" },
  sceneEditing: {
    has: (s) => Boolean(s.sceneEditing),
    says: "can add objects or signs to a scene",
  },
  physics: { has: (s) => Boolean(s.physics), says: "simulates physics" },
  // Absent means yes: every registered suite can open itself; the bridge says when it cannot.
  fitScenes: {
    has: (s) => s.fitScenes !== false,
    says: "Provael can open itself to render scenes to fit on (a benchmark behind the bridge cannot)",
  },
};

/** Why an attack cannot run against this policy and suite, or null when it can. */
export function notApplicableReason(
  attack: Attack<unknown>,
  policy: PolicyCapabilities,
  suite: SuiteCapabilities,
): string | null {
  for (const need of attack.requires.policy ?? []) {
    if (!POLICY_NEEDS[need].has(policy))
      return `needs a policy that ${POLICY_NEEDS[need].says} (${need})`;
  }
  for (const need of attack.requires.suite ?? []) {
    if (!SUITE_NEEDS[need].has(suite))
      return `needs a suite that ${SUITE_NEEDS[need].says} (${need})`;
  }
  return null;
}
