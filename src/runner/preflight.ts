/**
 * The pre-flight check: before any episode, the loaded policy is compared with the suite it is
 * about to play (cameras, image size, state and action dimensions), and each arm's attack with
 * what the pair offers. A pairing that cannot play one episode is refused; an arm whose attack
 * needs what the pair lacks is N/A, with its reason, never 0.
 */
import { ProvaelError } from "../core/errors.js";
import type { PlanSpec } from "../core/plan.js";
import type {
  Policy,
  PolicyCapabilities,
  PolicyOptions,
  Suite,
  SuiteCapabilities,
} from "../core/types.js";
import { defenses } from "../defenses/index.js";
import type { LoadedCalibration } from "../kernel/index.js";
import { checkCalibrationOverlap, checkSceneReuse, checkTrainingScenes } from "./scenes.js";

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

/**
 * The checks that need the loaded policy (its digest and capabilities): calibrations fitted on
 * these weights, the pairing, the defenses' requirements, and the scenes (no replayed scene for
 * a deterministic policy, no training scenes, no calibration scenes), all before any episode.
 * `--dry-run` makes the same ones after the same probe.
 */
export function checkWithPolicy(
  options: { policyOptions: PolicyOptions },
  c: {
    plan: PlanSpec;
    suite: Suite;
    policy: Policy;
    calibrations: Record<string, LoadedCalibration>;
  },
  probe: { digest: string | null; capabilities: PolicyCapabilities },
): void {
  const { plan, suite, policy, calibrations } = c;
  const policyDigest = probe.digest;
  for (const [task, c] of Object.entries(calibrations)) {
    if (c.calibration.policy_digest !== policyDigest) {
      throw new ProvaelError(
        "config/calibration-mismatch",
        `calibration ${c.file} was fitted on weights ${c.calibration.policy_digest ?? "(none)"}, but the loaded policy has ${policyDigest ?? "(none)"} (task '${task}')`,
        {
          hint: "recalibrate for these weights with `provael calibrate`",
        },
      );
    }
  }
  checkPairing(plan.policy, probe.capabilities, suite, policy.suites);
  checkDefenseRequirements(plan, probe.capabilities, suite.capabilities);
  // Scenes: no replayed scene for a deterministic policy, no training scenes, no calibration
  // scenes, all before any episode (each can be waived in the plan, except replay).
  const taskSpecs = suite.tasks();
  const stochastic = probe.capabilities.stochastic;
  checkSceneReuse(plan, taskSpecs, stochastic);
  checkTrainingScenes(plan, taskSpecs, policy.trainingScenes?.(options.policyOptions));
  checkCalibrationOverlap(
    plan,
    taskSpecs,
    Object.fromEntries(Object.entries(calibrations).map(([t, c]) => [t, c.calibration])),
    stochastic,
  );
}

/** A defense the policy or suite cannot serve is refused before anything plays. */
function checkDefenseRequirements(
  plan: PlanSpec,
  policy: PolicyCapabilities,
  suite: SuiteCapabilities,
): void {
  for (const id of plan.defenses?.ids ?? []) {
    const req = defenses.get(id).requires;
    const missing = [
      ...(req.policy ?? [])
        .filter((r) => (r === "cameras" ? policy.cameras.length === 0 : !policy[r]))
        .map((r) => `policy:${r}`),
      ...(req.suite ?? [])
        .filter((r) => (r === "cameras" ? suite.cameras.length === 0 : !suite[r]))
        .map((r) => `suite:${r}`),
    ];
    if (missing.length > 0) {
      throw new ProvaelError(
        "config/incompatible",
        `defense '${id}' needs ${missing.join(", ")}, which ${plan.policy} on ${plan.suite} lacks`,
        {
          details: { defense: id, missing },
          hint: "drop the defense from --defenses, or pair a policy and suite that provide it",
        },
      );
    }
  }
}
