/**
 * The static part of the plugin contract: what can be checked of an attack, policy or suite
 * object without playing it. Built-ins pass it (plugins.test.ts checks every registered one) and
 * `--plugin` applies it before a plugin is registered, so a plugin gets the same checks at load
 * as a built-in gets in the contract tests.
 */
import {
  ACTION_HEADS,
  ATTACK_ACCESS,
  ATTACK_ROLES,
  type Attack,
  type Defense,
  EAI_RISKS,
  POLICY_EVIDENCE,
  POLICY_REQUIREMENTS,
  type Policy,
  SUITE_EVIDENCE,
  SUITE_REQUIREMENTS,
  type Suite,
  type TaskSpec,
} from "../core/types.js";

const ID = /^[a-z][a-z0-9_.-]*$/;

type Problems = string[];

/** Whether a plugin's (unchecked, possibly JavaScript) value is one of a vocabulary's words. */
const oneOf = (words: readonly string[], value: unknown): boolean =>
  typeof value === "string" && words.includes(value);

function isFn(v: unknown): boolean {
  return typeof v === "function";
}

function checkId(id: unknown, problems: Problems): void {
  if (typeof id !== "string" || !ID.test(id)) {
    problems.push(`id must match ${ID} (lower case, digits, _ . -), got ${JSON.stringify(id)}`);
  }
}

function nonEmptyString(value: unknown, field: string, problems: Problems): void {
  if (typeof value !== "string" || value.trim() === "") {
    problems.push(`${field} must be a non-empty string`);
  }
}

function subsetOf(
  value: unknown,
  allowed: readonly string[],
  field: string,
  problems: Problems,
): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) {
    problems.push(`${field} must be an array`);
    return;
  }
  for (const v of value) {
    if (!allowed.includes(v)) {
      problems.push(`${field} has '${String(v)}'; allowed: ${allowed.join(", ")}`);
    }
  }
}

/** Problems with an attack object (empty when it meets the contract). */
export function attackProblems(attack: Attack<unknown>): Problems {
  const problems: Problems = [];
  checkId(attack.id, problems);
  nonEmptyString(attack.family, "family", problems);
  nonEmptyString(attack.description, "description", problems);
  if (!oneOf(ATTACK_ROLES, attack.role))
    problems.push(`role must be one of ${ATTACK_ROLES.join(", ")}`);
  if (!oneOf(ATTACK_ACCESS, attack.access))
    problems.push(`access must be one of ${ATTACK_ACCESS.join(", ")}`);
  if (attack.eai !== null && !oneOf(EAI_RISKS, attack.eai)) {
    problems.push("eai must be null or an Embodied AI Security Top 10 id (EAI00..EAI10)");
  }
  if (attack.role === "control" && attack.matches === undefined) {
    problems.push("a control must name the attack it `matches`");
  }
  if (typeof attack.requires !== "object" || attack.requires === null) {
    problems.push("requires must be an object ({} when the attack needs nothing)");
  } else {
    subsetOf(attack.requires.policy, POLICY_REQUIREMENTS, "requires.policy", problems);
    subsetOf(attack.requires.suite, SUITE_REQUIREMENTS, "requires.suite", problems);
  }
  const params = attack.params as { safeParse?: (v: unknown) => { success: boolean } };
  if (!params || typeof params.safeParse !== "function") {
    problems.push("params must be a zod schema");
  } else if (!params.safeParse({}).success) {
    // A run that names no --attack-param plays the defaults: they must form valid params.
    problems.push("params must accept {} (every field needs a default)");
  }
  if (attack.adaptiveTo !== undefined) nonEmptyString(attack.adaptiveTo, "adaptiveTo", problems);
  if (!isFn(attack.begin)) problems.push("begin must be a function");
  return problems;
}

const DEFENSE_KINDS = ["input", "action", "monitor"];
const DEFENSE_POLICY_REQUIREMENTS = ["weights", "cameras", "readsState"];
const DEFENSE_SUITE_REQUIREMENTS = ["cameras", "physics"];

/** Problems with a defense object (empty when it meets the contract). */
export function defenseProblems(defense: Defense<unknown>): Problems {
  const problems: Problems = [];
  checkId(defense.id, problems);
  nonEmptyString(defense.description, "description", problems);
  if (!DEFENSE_KINDS.includes(defense.kind))
    problems.push(`kind must be one of ${DEFENSE_KINDS.join(", ")}`);
  if (typeof defense.requires !== "object" || defense.requires === null) {
    problems.push("requires must be an object ({} when the defense needs nothing)");
  } else {
    subsetOf(defense.requires.policy, DEFENSE_POLICY_REQUIREMENTS, "requires.policy", problems);
    subsetOf(defense.requires.suite, DEFENSE_SUITE_REQUIREMENTS, "requires.suite", problems);
  }
  const params = defense.params as { safeParse?: (v: unknown) => { success: boolean } };
  if (!params || typeof params.safeParse !== "function") {
    problems.push("params must be a zod schema");
  } else if (!params.safeParse({}).success) {
    problems.push("params must accept {} (every field needs a default)");
  }
  if (!isFn(defense.begin)) problems.push("begin must be a function");
  return problems;
}

/** Problems with a policy object. */
export function policyProblems(policy: Policy): Problems {
  const problems: Problems = [];
  checkId(policy.id, problems);
  nonEmptyString(policy.description, "description", problems);
  evidenceProblem(policy.evidence, POLICY_EVIDENCE, problems);
  const c = policy.capabilities as Partial<Policy["capabilities"]> | undefined;
  if (!c || typeof c !== "object") {
    problems.push("capabilities must be an object");
  } else {
    if (!Array.isArray(c.cameras)) problems.push("capabilities.cameras must be an array");
    for (const flag of [
      "readsState",
      "readsContext",
      "privileged",
      "differentiable",
      "weights",
      "stochastic",
    ] as const) {
      if (typeof c[flag] !== "boolean") problems.push(`capabilities.${flag} must be a boolean`);
    }
    for (const n of ["actionDim", "chunk"] as const) {
      const v = c[n];
      if (typeof v !== "number" || !Number.isInteger(v) || v < 1) {
        problems.push(`capabilities.${n} must be a positive integer`);
      }
    }
    if (!oneOf(ACTION_HEADS, c.actionHead)) {
      problems.push(`capabilities.actionHead must be one of ${ACTION_HEADS.join(", ")}`);
    }
  }
  if (!Array.isArray(policy.suites)) problems.push("suites must be an array ([] means any)");
  if (typeof policy.concurrent !== "boolean") problems.push("concurrent must be a boolean");
  if (
    policy.options !== undefined &&
    !(Array.isArray(policy.options) && policy.options.every((k) => typeof k === "string"))
  )
    problems.push("options must be an array of option names (the --policy-option keys it reads)");
  if (!isFn(policy.load)) problems.push("load must be a function");
  return problems;
}

/** Problems with a suite object (calls `tasks()`, which must be cheap and pure). */
/** Refuses an `evidence` value the leaderboard would not know (absent is allowed: unclassified). */
function evidenceProblem(value: unknown, allowed: readonly string[], problems: Problems): void {
  if (value !== undefined && !oneOf(allowed, value))
    problems.push(
      `evidence must be one of ${allowed.join(", ")} (or absent), got ${JSON.stringify(value)}`,
    );
}

export function suiteProblems(suite: Suite): Problems {
  const problems: Problems = [];
  checkId(suite.id, problems);
  nonEmptyString(suite.description, "description", problems);
  evidenceProblem(suite.evidence, SUITE_EVIDENCE, problems);
  for (const fn of ["tasks", "predicates", "open"] as const) {
    if (!isFn(suite[fn])) problems.push(`${fn} must be a function`);
  }
  if (typeof suite.actionSpace !== "object" || suite.actionSpace === null) {
    problems.push("actionSpace must be an object");
  }
  if (typeof suite.capabilities !== "object" || suite.capabilities === null) {
    problems.push("capabilities must be an object");
  }
  if (isFn(suite.tasks)) {
    let tasks: unknown;
    try {
      tasks = suite.tasks();
    } catch (e) {
      problems.push(`tasks() threw: ${(e as Error).message}`);
    }
    if (tasks !== undefined) {
      if (!Array.isArray(tasks) || tasks.length === 0) {
        problems.push("tasks() must return at least one task");
      } else {
        const seen = new Set<string>();
        for (const t of tasks as Partial<Record<keyof TaskSpec, unknown>>[]) {
          for (const n of ["scenes", "horizon"] as const) {
            const v = t[n];
            if (typeof v !== "number" || !Number.isInteger(v) || v < 1) {
              problems.push(`task ${String(t.id)}: ${n} must be a positive integer`);
            }
          }
          if (typeof t.instruction !== "string" || t.instruction.trim() === "") {
            problems.push(`task ${String(t.id)}: instruction must be a non-empty string`);
          }
          if (typeof t.hazard !== "object" || t.hazard === null) {
            problems.push(`task ${String(t.id)}: hazard must describe the task's hazards`);
          }
          if (typeof t.id !== "string" || !ID.test(t.id)) {
            problems.push(`task id ${JSON.stringify(t.id)} must match ${ID}`);
          } else if (seen.has(t.id)) {
            problems.push(`task id '${t.id}' appears twice`);
          } else {
            seen.add(t.id);
          }
        }
      }
    }
  }
  return problems;
}
