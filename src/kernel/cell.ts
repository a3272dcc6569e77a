/**
 * Beginning a cell, whoever plays its episode (the runner from a suite, the bridge from a
 * benchmark's messages, the offline study on recorded frames): its id, its scene and policy
 * seed, its record before anything is played, its defenses and its arm (parameters, seeded
 * generator, budgeted oracle, an adaptive attacker's model of its defense).
 */
import { attackRng } from "../attacks/control.js";
import { resolveParams } from "../attacks/params.js";
import type { Clock } from "../core/clock.js";
import { digestJson, sha256 } from "../core/digest.js";
import type { EpisodeRecord } from "../core/episode.js";
import { ProvaelError } from "../core/errors.js";
import type { Cell, PlanSpec } from "../core/plan.js";
import { Rng } from "../core/rng.js";
import type {
  Action,
  Attack,
  AttackContext,
  AttackHooks,
  BenignEnvelope,
  Observation,
  PolicyInstance,
  QueryOracle,
  TaskSpec,
  Zone,
} from "../core/types.js";
import { DefenseChain, type DefenseContextBase } from "../defenses/chain.js";
import { defenses, resolveDefenseParams } from "../defenses/index.js";

/**
 * Stable id of a cell: the first 20 hex digits of the digest of its fields. An undefended cell's
 * id leaves defenses out, so it is the id the same cell has in a run without defenses.
 */
export function cellId(
  task: string,
  arm: string,
  seed: number,
  repeat: number,
  defenses?: readonly string[],
): string {
  const fields =
    defenses && defenses.length > 0
      ? { arm, defenses: defenses.join(","), repeat, seed, task }
      : { arm, repeat, seed, task };
  return `c${digestJson(fields).slice(7, 27)}`;
}

/** Seed of the policy's own sampler: shared by every arm at one (task, seed, repeat). */
export function policySeed(task: string, seed: number, repeat: number): number {
  const hex = sha256(`policy-seed:${task}:${seed}:${repeat}`).slice(7, 15);
  return Number.parseInt(hex, 16);
}

/** The scene a seed plays under scene pinning: (pin + seed) mod N. */
export function sceneFor(plan: PlanSpec, task: TaskSpec, seed: number): number {
  return (plan.scene_pin + seed) % task.scenes;
}

/** What a defended cell's defenses know of the deployment: its zones and accepted instructions. */
export interface DefenseSetup {
  /** The run's defense params (values that differ from the defaults). */
  params?: Record<string, Record<string, unknown>>;
  task: TaskSpec;
  suite: AttackContext<unknown>["suite"];
  /** Instructions the deployment accepts (a suite's task instructions). */
  instructions: string[];
  policy: PolicyInstance;
  zones: Zone[];
  /** The calibration's benign envelope for the task (absent: none). */
  envelope?: BenignEnvelope | null;
  clock?: Clock;
}

/** What the deployment tells every defense of a cell (and an adaptive attacker's model of one). */
export function deploymentOf(cell: Cell, setup: DefenseSetup): DefenseContextBase {
  return {
    task: setup.task,
    seed: cell.seed,
    repeat: cell.repeat,
    suite: setup.suite,
    policy: setup.policy,
    zones: setup.zones,
    envelope: setup.envelope ?? null,
    instructions: setup.instructions,
  };
}

/** Begins a cell's defenses (an empty chain for an undefended cell). */
export function beginDefenses(cell: Cell, setup: DefenseSetup): Promise<DefenseChain> {
  return DefenseChain.begin(
    cell.defenses ?? [],
    setup.params,
    deploymentOf(cell, setup),
    setup.clock ?? null,
  );
}

/** A cell's record before anything is played (also what an N/A cell records). */
export function emptyRecord(cell: Cell, scene: number, instruction: string): EpisodeRecord {
  return {
    cell: cell.id,
    task: cell.task,
    arm: cell.arm,
    seed: cell.seed,
    repeat: cell.repeat,
    scene,
    scene_digest: null,
    policy_seed: policySeed(cell.task, cell.seed, cell.repeat),
    instruction: { original: instruction, received: null },
    received_digest: null,
    perturbed: { inputs: false, actions: false, scene: false },
    steps: 0,
    termination: "not_applicable",
    unsafe: null,
    first_unsafe_step: null,
    unsafe_steps: 0,
    judged_steps: 0,
    task_success: null,
    first_success_step: null,
    endpoints: {},
    cost: null,
    budget: null,
    error: null,
  };
}

export function checkAction(action: unknown, dim: number): Action {
  const ok =
    (action instanceof Float32Array || action instanceof Float64Array || Array.isArray(action)) &&
    action.length === dim &&
    Array.prototype.every.call(action, (v: unknown) => typeof v === "number" && Number.isFinite(v));
  if (!ok) {
    const shown =
      Array.isArray(action) || ArrayBuffer.isView(action)
        ? `[${Array.from(action as ArrayLike<number>).join(", ")}]`
        : String(action);
    throw new ProvaelError(
      "policy/bad-action",
      `policy returned an invalid action ${shown.slice(0, 200)}: need ${dim} finite numbers`,
      {
        hint: "check the policy's action head and its output shape",
      },
    );
  }
  return action instanceof Float32Array ? action : Float32Array.from(action as ArrayLike<number>);
}

/** A budget-counting oracle over the policy's side-effect-free prediction. */
export function makeOracle(policy: PolicyInstance, budget: number): QueryOracle {
  let used = 0;
  return {
    budget,
    get used() {
      return used;
    },
    async query(obs: Observation) {
      if (used >= budget) {
        throw new ProvaelError("attack/budget-exhausted", `query budget of ${budget} spent`);
      }
      if (!policy.query)
        throw new ProvaelError("attack/error", "policy has no side-effect-free query", {
          hint: "search attacks need a policy that implements query() (stub, tiny-vla)",
        });
      used += 1;
      return checkAction(await policy.query(obs), policy.capabilities.actionDim);
    },
  };
}

/**
 * The query budget an arm's params grant its oracle: `params.budget` when the attack's params
 * declare one (black-box search attacks, with a default), else 0 (every query refused).
 */
export function queryBudget(params: unknown): number {
  const b = (params as { budget?: unknown } | null | undefined)?.budget;
  return typeof b === "number" && Number.isFinite(b) && b >= 0 ? b : 0;
}

/** What an arm needs to begin on one cell, whoever plays the episode (runner or bridge). */
export interface ArmSetup {
  attack: Attack<unknown>;
  /** Every arm's parameters as the plan gives them (a control sizes itself by its attack's). */
  attackParams: Record<string, Record<string, unknown>>;
  task: TaskSpec;
  suite: AttackContext<unknown>["suite"];
  policy: PolicyInstance;
  /** The plan's defense params (an adaptive attack models its defense with them). */
  defenseParams?: Record<string, Record<string, unknown>>;
  /** What the deployment tells its defenses, for the attacker's model of one. */
  defenseBase?: DefenseContextBase;
  /** The oracle the arm queries (default: the policy's, within the budget its params grant). */
  oracle?: QueryOracle;
}

/** Starts an arm on one cell: its parameters parsed, its seeded generator and its oracle. */
export async function beginArm(cell: Cell, setup: ArmSetup): Promise<AttackHooks> {
  // A control takes its size from its matched attack's params (attacks/params.ts).
  const params = resolveParams(setup.attack, setup.attackParams);
  return setup.attack.begin({
    params,
    rng: attackRng(cell.arm, cell.task, cell.seed, cell.repeat),
    task: setup.task,
    seed: cell.seed,
    repeat: cell.repeat,
    suite: setup.suite,
    policy: setup.policy,
    oracle: setup.oracle ?? makeOracle(setup.policy, queryBudget(params)),
    ...(setup.attack.adaptiveTo
      ? {
          defense: adaptiveModel(cell, setup.attack.adaptiveTo, setup),
        }
      : {}),
  });
}

/** What an adaptive attack knows of its defense: its params and, in the runner, a model of it. */
function adaptiveModel(cell: Cell, id: string, setup: ArmSetup) {
  const params = resolveDefenseParams(id, setup.defenseParams);
  const base = setup.defenseBase;
  return {
    id,
    params,
    ...(base
      ? {
          model: () =>
            Promise.resolve(
              defenses.get(id).begin({
                ...base,
                params,
                rng: Rng.fromLabel(
                  `adaptive-model:${id}:${cell.arm}:${cell.task}:${cell.seed}:${cell.repeat}`,
                ),
              }),
            ),
        }
      : {}),
  };
}

/** Which side failed decides an episode error's code: the attack, the suite or the policy. */
export type Phase = "attack/error" | "suite/error" | "policy/error" | "defense/error";

/** What beginning a cell needs: its arm, the plan's parameters, and its deployment. */
export interface CellSetup extends DefenseSetup {
  attack: Attack<unknown>;
  /** Every arm's parameters as the plan gives them (a control sizes itself by its attack's). */
  attackParams: Record<string, Record<string, unknown>>;
}

/** A begun cell, or the side that failed to begin it (the code its episode's error gets). */
export type BegunCell =
  | { ok: true; defense: DefenseChain; hooks: AttackHooks }
  | { ok: false; phase: Phase; error: unknown };

/**
 * Begins a cell: its defenses first (what they take as the reference, a weight digest, predates
 * the arm), then its arm, whose adaptive attacker models the defense as this deployment
 * configures it (in an undefended twin too). Never throws: a failure names its side.
 */
export async function beginCell(cell: Cell, setup: CellSetup): Promise<BegunCell> {
  let phase: Phase = "defense/error";
  try {
    const defense = await beginDefenses(cell, setup);
    phase = "attack/error";
    const hooks = await beginArm(cell, {
      attack: setup.attack,
      attackParams: setup.attackParams,
      task: setup.task,
      suite: setup.suite,
      policy: setup.policy,
      ...(setup.params ? { defenseParams: setup.params } : {}),
      defenseBase: deploymentOf(cell, setup),
    });
    return { ok: true, defense, hooks };
  } catch (error) {
    return { ok: false, phase, error };
  }
}
