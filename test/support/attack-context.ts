/** Builds the context an attack's `begin` receives, for unit tests of one attack's mechanism. */
import { attackRng } from "../../src/attacks/control.js";
import { type GivenParams, resolveParams } from "../../src/attacks/params.js";
import type {
  Attack,
  AttackContext,
  AttackHooks,
  DifferentiablePolicy,
  Observation,
  PolicyInstance,
  Suite,
  TaskSpec,
  WeightAccess,
} from "../../src/core/types.js";
import { makeOracle, queryBudget } from "../../src/kernel/index.js";

export interface ContextOptions {
  suite: Suite;
  task: TaskSpec;
  policy: PolicyInstance;
  seed?: number;
  repeat?: number;
  params?: Record<string, unknown>;
  /** Params the run gives other arms (a control's matched attack), as a plan holds them. */
  given?: GivenParams;
}

/** The hooks of `attack` for one cell, with params parsed and the oracle budgeted as the runner does. */
export async function begin<P>(
  attack: Attack<P>,
  options: ContextOptions,
): Promise<{ hooks: AttackHooks; ctx: AttackContext<P> }> {
  const seed = options.seed ?? 0;
  const repeat = options.repeat ?? 0;
  const params = resolveParams(attack, {
    ...(options.given ?? {}),
    [attack.id]: { ...(options.given?.[attack.id] ?? {}), ...(options.params ?? {}) },
  });
  const ctx: AttackContext<P> = {
    params,
    rng: attackRng(attack.id, options.task.id, seed, repeat),
    task: options.task,
    seed,
    repeat,
    suite: {
      id: options.suite.id,
      capabilities: options.suite.capabilities,
      actionSpace: options.suite.actionSpace,
    },
    policy: options.policy,
    oracle: makeOracle(options.policy, queryBudget(params)),
  };
  return { hooks: await attack.begin(ctx), ctx };
}

/** A policy instance that answers `act` and `query` with a function of the observation. */
export function fakePolicy(
  respond: (obs: Observation) => Float32Array,
  extra: { differentiable?: DifferentiablePolicy; weights?: WeightAccess } = {},
): Omit<PolicyInstance, "act" | "query"> & {
  queries: number;
  act(obs: Observation): Float32Array;
  query(obs: Observation): Float32Array;
} {
  const inst = {
    queries: 0,
    capabilities: {
      cameras: ["agentview", "wrist"],
      readsState: true,
      readsContext: false,
      privileged: false,
      actionDim: 7,
      chunk: 1,
      differentiable: false,
      weights: false,
      stochastic: false,
      actionHead: "regression" as const,
    },
    reset() {},
    act: (obs: Observation) => respond(obs),
    query(obs: Observation) {
      inst.queries += 1;
      return respond(obs);
    },
    close() {},
    ...extra,
  };
  return inst;
}

/** A small RGB observation with a flat grey image per camera (no privileged state). */
export function flatObservation(
  width: number,
  height: number,
  cameras = ["agentview"],
): Observation {
  const images: Observation["images"] = {};
  for (const c of cameras) {
    images[c] = { width, height, channels: 3, data: new Uint8Array(width * height * 3).fill(100) };
  }
  return { images, state: new Float32Array(8), instruction: "pick up the red block" };
}
