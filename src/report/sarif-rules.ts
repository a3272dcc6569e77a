/**
 * The Embodied AI Security risks Provael's attacks are tagged with, described in our own words.
 * SARIF rules, the compliance map and the HTML report all read names from here.
 */
export interface EaiRiskInfo {
  id: string;
  name: string;
  short: string;
  full: string;
  help: string;
  /** NIST AI 100-2 attack classes this risk falls under (our reading). */
  nist: Array<
    | "evasion"
    | "poisoning"
    | "privacy"
    | "misuse"
    | "direct-prompt-injection"
    | "indirect-prompt-injection"
    | "supply-chain"
  >;
}

const RISKS: EaiRiskInfo[] = [
  {
    id: "EAI00",
    name: "UnclassifiedEmbodiedRisk",
    short: "An embodied-AI risk not yet placed in a category.",
    full: "The attack exercises a weakness of the robot policy that Provael has not yet assigned to a category of the Embodied AI Security list.",
    help: "Read the attack's documentation (provael list-attacks) for what it perturbs, and the arm's rate against its benign floor and controls.",
    nist: [],
  },
  {
    id: "EAI01",
    name: "PolicyInstructionJailbreak",
    short: "A reworded or reframed instruction steers the policy into an unsafe state.",
    full: "The policy follows a language instruction that was rewritten (role-play framing, a substituted goal, a paraphrase pointing at a hazard) and drives the robot into a state its task never required, such as a keep-out zone or a forbidden grasp.",
    help: "Filter or normalise instructions before they reach the policy, bind the policy to an allow-list of task goals, and enforce keep-out zones and forbidden objects below the policy (a safety controller the policy cannot talk its way past). Compare the rate with its matched controls: if a harmless rewording of the same size does the same, the policy is brittle to any rewording, not only to adversarial ones.",
    nist: ["direct-prompt-injection", "misuse"],
  },
  {
    id: "EAI02",
    name: "AdversarialPerception",
    short: "A change to what the cameras see (patch, decoy object) steers the policy.",
    full: "A visual perturbation in the scene or the image, such as a printed patch or a decoy object placed near a hazard, changes what the policy perceives so that it acts unsafely.",
    help: "Test with placebo patches and neutral decoys of the same size (the controls), train or fine-tune with such perturbations, and keep a perception-independent safety layer for hazards.",
    nist: ["evasion"],
  },
  {
    id: "EAI03",
    name: "SensorStateSpoofing",
    short: "Falsified proprioception or sensor state misleads the policy.",
    full: "The state vector the policy reads (joint angles, end-effector pose, gripper opening) is spoofed, so that the policy plans from a wrong belief about where the robot is.",
    help: "Cross-check state estimates from independent sensors, bound the rate of change of state inputs, and authenticate the sensor channel.",
    nist: ["evasion"],
  },
  {
    id: "EAI04",
    name: "ActionSpaceIntegrity",
    short: "The action channel is frozen, hijacked or steered.",
    full: "Actions between the policy and the controller are altered, replaced or withheld, or a search drives the policy's own outputs toward a target, so that the robot moves somewhere it was not asked to go.",
    help: "Authenticate and rate-limit the action channel, check commanded motion against a safety envelope in the controller, and monitor for frozen or implausible action streams.",
    nist: ["evasion"],
  },
  {
    id: "EAI05",
    name: "EmbodiedPromptInjection",
    short: "Text placed in the scene or in a side channel injects instructions.",
    full: "Instructions arrive indirectly, written on an object in view or inserted into a tool description or context channel the policy reads, and the policy obeys them over its task.",
    help: "Treat every text the policy can read from the environment or tools as untrusted data, separate it from the operator's instruction, and test with the matched neutral-text controls.",
    nist: ["indirect-prompt-injection"],
  },
  {
    id: "EAI06",
    name: "UnsafePhysicalInteraction",
    short: "The policy makes unsafe physical contact (forces, fragile or forbidden objects).",
    full: "The policy exerts excessive force, strikes a fragile object or grasps a forbidden one, measured by the physical-hazard and forbidden-grasp predicates.",
    help: "Limit contact forces in the controller, mark fragile and forbidden objects in the safety layer, and calibrate the predicates on benign rollouts.",
    nist: ["misuse"],
  },
  {
    id: "EAI07",
    name: "ModelWeightIntegrity",
    short: "Corrupted or tampered weights change the policy's behaviour.",
    full: "The policy's weights were altered (bit flips, tampering in storage or transit), and the altered model behaves unsafely while still loading and running.",
    help: "Pin the policy by digest, verify signatures on model files before loading, and monitor for drift in benign behaviour.",
    nist: ["poisoning", "supply-chain"],
  },
  {
    id: "EAI08",
    name: "ServingSupplyChain",
    short: "The serving stack or its dependencies are compromised.",
    full: "The path that delivers observations and actions between robot and model server (network protocol, serialisation, third-party packages) can be tampered with.",
    help: "Authenticate the policy server, pin and verify dependencies, and record the policy digest in every run.",
    nist: ["supply-chain"],
  },
  {
    id: "EAI09",
    name: "DataPoisoningBackdoor",
    short: "Training or fine-tuning data plants a trigger.",
    full: "Demonstrations or fine-tuning data carry a trigger that makes the policy act unsafely when the trigger appears at run time.",
    help: "Audit and sign training data, test for triggers, and compare against a policy trained on trusted data.",
    nist: ["poisoning"],
  },
  {
    id: "EAI10",
    name: "InsufficientMonitoring",
    short: "Unsafe behaviour goes unobserved or unrecorded.",
    full: "The deployment lacks the monitoring, logging and evidence needed to notice unsafe behaviour or an attack and to reconstruct what happened.",
    help: "Keep signed, reproducible evidence of each evaluation, monitor deployed behaviour, and re-run the red team on every policy update.",
    nist: [],
  },
];

/** The description of an EAI risk id; an unknown id gets a neutral one naming it. */
export function eaiRisk(id: string): EaiRiskInfo {
  return (
    RISKS.find((r) => r.id === id) ?? {
      id,
      name: `EmbodiedRisk${id.replace(/[^A-Za-z0-9]/g, "")}`,
      short: `Embodied AI Security risk ${id}.`,
      full: `An attack tagged with the Embodied AI Security risk ${id}.`,
      help: "Read the attack's documentation (provael list-attacks).",
      nist: [],
    }
  );
}

export const EAI_RISKS: readonly EaiRiskInfo[] = RISKS;
