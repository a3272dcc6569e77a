/**
 * One episode of protocol `provael-redteam/v2`: reset to the pinned scene, let the arm perturb
 * what the policy sees and does, step the suite, judge every step, latch endpoints.
 */

import { attackRng } from "../attacks/control.js";
import { resolveParams } from "../attacks/params.js";
import { sha256, sha256Stream } from "../core/digest.js";
import { asProvaelError, ProvaelError } from "../core/errors.js";
import { isRendered } from "../core/lazy-images.js";
import type {
  Action,
  Attack,
  AttackHooks,
  BudgetUse,
  Observation,
  PolicyInstance,
  Predicate,
  QueryOracle,
  Suite,
  SuiteInstance,
  TaskSpec,
} from "../core/types.js";
import type { Cell, PlanSpec } from "./plan.js";

export type TerminationReason =
  | "horizon"
  | "unsafe"
  | "success"
  | "done"
  | "error"
  | "not_applicable";

/**
 * One predicate's endpoint. Its own judged steps decide it: `unsafe` is null when the predicate
 * judged no step (another predicate judging those steps does not make this one safe).
 */
export interface EndpointRecord {
  unsafe: boolean | null;
  first_step: number | null;
  steps: number;
  judged_steps: number;
  /** Cumulative cost: the predicate's excess force over its threshold summed over steps (N·step); only predicates that measure force report it. */
  cost?: number;
}

/** What the journal stores for one finished cell (the report's `episodes[]` plus delivery facts). */
export interface EpisodeRecord {
  cell: string;
  task: string;
  arm: string;
  seed: number;
  repeat: number;
  scene: number;
  scene_digest: string | null;
  policy_seed: number;
  instruction: { original: string; received: string | null };
  received_digest: string | null;
  /** What the arm changed during the episode (inputs, actions, scene). */
  perturbed: { inputs: boolean; actions: boolean; scene: boolean };
  steps: number;
  termination: TerminationReason;
  unsafe: boolean | null;
  first_unsafe_step: number | null;
  unsafe_steps: number;
  /** Steps judged for the combined endpoint: every predicate judged them, or one found them unsafe. */
  judged_steps: number;
  task_success: boolean | null;
  first_success_step: number | null;
  endpoints: Record<string, EndpointRecord>;
  /** Sum of the endpoints' cumulative costs (N·step); null when no predicate measures force. */
  cost?: number | null;
  budget: BudgetUse | null;
  error: { code: string; message: string } | null;
}

export interface TrajectoryStep {
  cell: string;
  step: number;
  instruction_digest: string;
  action: number[];
  pose: number[] | null;
  unsafe: boolean | null;
}

export interface EpisodeContext {
  plan: PlanSpec;
  suite: Suite;
  instance: SuiteInstance;
  policy: PolicyInstance;
  attack: Attack<unknown>;
  /** Null when the attack's requirements are unmet: the cell is recorded as N/A. */
  applicable: boolean;
  task: TaskSpec;
  predicates: Predicate[];
  /** Sees what the policy received at each step (frame capture for the HTML report). */
  observe?: (step: number, seen: Observation) => void;
}

/** Seed of the policy's own sampler: shared by every arm at one (task, seed, repeat). */
export function policySeed(task: string, seed: number, repeat: number): number {
  const hex = sha256(`policy-seed:${task}:${seed}:${repeat}`).slice(7, 15);
  return Number.parseInt(hex, 16);
}

/** The scene a seed plays under scene pinning: (pin + seed) mod N. */
export function sceneFor(plan: PlanSpec, task: TaskSpec, seed: number): number {
  return (plan.scenePin + seed) % task.scenes;
}

function baseRecord(cell: Cell, ctx: EpisodeContext): EpisodeRecord {
  return {
    cell: cell.id,
    task: cell.task,
    arm: cell.arm,
    seed: cell.seed,
    repeat: cell.repeat,
    scene: sceneFor(ctx.plan, ctx.task, cell.seed),
    scene_digest: null,
    policy_seed: policySeed(cell.task, cell.seed, cell.repeat),
    instruction: { original: ctx.task.instruction, received: null },
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

function imagesEqual(a: Observation, b: Observation): boolean {
  // The same record (an attack that left the cameras alone): equal without rendering them.
  if (a.images === b.images) return true;
  const ka = Object.keys(a.images);
  if (ka.length !== Object.keys(b.images).length) return false;
  for (const k of ka) {
    const x = a.images[k];
    const y = b.images[k];
    if (!x || !y || x.width !== y.width || x.height !== y.height) return false;
    if (x.data !== y.data && Buffer.compare(x.data, y.data) !== 0) return false;
  }
  return true;
}

function inputsEqual(a: Observation, b: Observation): boolean {
  if (a.instruction !== b.instruction) return false;
  if ((a.context ?? []).join("\u0000") !== (b.context ?? []).join("\u0000")) return false;
  if (
    a.state !== b.state &&
    Buffer.compare(
      new Uint8Array(a.state.buffer, a.state.byteOffset, a.state.byteLength),
      new Uint8Array(b.state.buffer, b.state.byteOffset, b.state.byteLength),
    ) !== 0
  )
    return false;
  return imagesEqual(a, b);
}

/**
 * Adds what the policy received at one step to the running digest (hashed at the boundary).
 * Called after the policy acted: camera images rendered on demand count only when something
 * read them (a chunked policy reads its cameras only when it replans).
 */
function hashInputs(h: ReturnType<typeof sha256Stream>, obs: Observation): void {
  h.update(`i:${obs.instruction}\u0000`);
  for (const c of obs.context ?? []) h.update(`c:${c}\u0000`);
  h.update(new Uint8Array(obs.state.buffer, obs.state.byteOffset, obs.state.byteLength));
  for (const name of Object.keys(obs.images).sort()) {
    if (!isRendered(obs.images, name)) continue;
    const img = obs.images[name];
    if (!img) continue;
    h.update(`m:${name}:${img.width}x${img.height}x${img.channels}\u0000`);
    h.update(img.data);
  }
}

function checkAction(action: unknown, dim: number): Action {
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

/** Plays one cell. Never throws for policy, suite or attack failures: they become `error`. */
export async function playEpisode(
  cell: Cell,
  ctx: EpisodeContext,
): Promise<{ record: EpisodeRecord; trajectory: TrajectoryStep[] }> {
  const record = baseRecord(cell, ctx);
  const trajectory: TrajectoryStep[] = [];
  if (!ctx.applicable) return { record, trajectory };

  const horizon = ctx.plan.horizon ?? ctx.task.horizon;
  const dim = ctx.suite.actionSpace.dim;
  const received = sha256Stream();
  let hooks: AttackHooks = {};
  const endpoints: Record<string, EndpointRecord> = {};
  for (const p of ctx.predicates)
    endpoints[p.id] = {
      unsafe: false,
      first_step: null,
      steps: 0,
      judged_steps: 0,
      ...(p.measuresCost ? { cost: 0 } : {}),
    };
  record.endpoints = endpoints;
  record.unsafe = false;
  record.task_success = false;
  record.termination = "horizon";

  // Which side failed decides the error code: the attack, the suite or the policy.
  let phase: "attack/error" | "suite/error" | "policy/error" = "attack/error";
  try {
    // A control takes its size from its matched attack's params (attacks/params.ts).
    const params = resolveParams(ctx.attack, ctx.plan.attackParams);
    hooks = await ctx.attack.begin({
      params,
      rng: attackRng(cell.arm, cell.task, cell.seed, cell.repeat),
      task: ctx.task,
      seed: cell.seed,
      repeat: cell.repeat,
      suite: {
        id: ctx.suite.id,
        capabilities: ctx.suite.capabilities,
        actionSpace: ctx.suite.actionSpace,
      },
      policy: ctx.policy,
      oracle: makeOracle(ctx.policy, queryBudget(params)),
    });
    const edits = hooks.scene?.() ?? [];
    record.perturbed.scene = edits.length > 0;
    // A weight attack perturbs the function that produces the actions: count it there.
    if (ctx.attack.access === "weights") record.perturbed.actions = true;
    phase = "suite/error";
    let result = await ctx.instance.reset({
      task: cell.task,
      scene: record.scene,
      seed: cell.seed,
      ...(edits.length > 0 ? { edits } : {}),
    });
    record.scene_digest = ctx.instance.sceneDigest();
    phase = "policy/error";
    await ctx.policy.reset({ task: cell.task, seed: cell.seed, policySeed: record.policy_seed });
    const instruction = hooks.instruction
      ? hooks.instruction(result.obs.instruction)
      : result.obs.instruction;
    record.instruction = { original: result.obs.instruction, received: instruction };
    const instructionDigest = sha256(instruction);

    for (let step = 0; step < horizon; step++) {
      const clean: Observation = result.obs;
      let seen: Observation = { ...clean, instruction };
      phase = "attack/error";
      if (hooks.perceive) seen = await hooks.perceive(seen, step);
      if (!inputsEqual(clean, seen)) record.perturbed.inputs = true;
      // What the policy actually received (a search attack may rewrite it in `perceive`).
      if (step === 0) record.instruction.received = seen.instruction;
      if (!ctx.policy.capabilities.privileged && seen.privileged !== undefined) {
        const { privileged: _dropped, ...rest } = seen;
        seen = rest;
      }
      ctx.observe?.(step, seen);
      phase = "policy/error";
      const proposed = checkAction(await ctx.policy.act(seen), dim);
      hashInputs(received, seen);
      let action = proposed;
      if (hooks.actuate) {
        phase = "attack/error";
        action = checkAction(hooks.actuate(proposed, step, result.state), dim);
        if (
          Buffer.compare(
            new Uint8Array(action.buffer, action.byteOffset, action.byteLength),
            new Uint8Array(proposed.buffer, proposed.byteOffset, proposed.byteLength),
          ) !== 0
        ) {
          record.perturbed.actions = true;
        }
      }
      phase = "suite/error";
      result = await ctx.instance.step(action);
      record.steps = step + 1;

      // The combined endpoint is an OR of the predicates in three-valued logic: a step is unsafe
      // when any predicate judged it unsafe, safe only when every predicate judged it safe, and
      // unjudged otherwise (a keep-out step without a pose stays unjudged even when
      // physical_hazard judged it safe).
      let allJudged = true;
      let unsafe = false;
      for (const p of ctx.predicates) {
        const j = p.evaluate(result.state);
        const e = endpoints[p.id] as EndpointRecord;
        if (!j.judged) {
          allJudged = false;
          continue;
        }
        e.judged_steps += 1;
        if (j.cost !== undefined) e.cost = (e.cost ?? 0) + j.cost;
        if (j.unsafe) {
          unsafe = true;
          e.steps += 1;
          if (!e.unsafe) {
            e.unsafe = true;
            e.first_step = step;
          }
        }
      }
      const judged = unsafe || (allJudged && ctx.predicates.length > 0);
      if (judged) record.judged_steps += 1;
      if (unsafe) {
        record.unsafe_steps += 1;
        if (!record.unsafe) {
          record.unsafe = true;
          record.first_unsafe_step = step;
        }
      }
      if (result.taskSuccess && !record.task_success) {
        record.task_success = true;
        record.first_success_step = step;
      }
      const pose = result.state.eefPos ? Array.from(result.state.eefPos) : null;
      trajectory.push({
        cell: cell.id,
        step,
        instruction_digest:
          seen.instruction === instruction ? instructionDigest : sha256(seen.instruction),
        action: Array.from(action),
        pose,
        unsafe: judged ? unsafe : null,
      });
      if (ctx.plan.termination === "first-event") {
        if (unsafe) {
          record.termination = "unsafe";
          break;
        }
        if (result.taskSuccess) {
          record.termination = "success";
          break;
        }
      }
      if (result.done) {
        record.termination = "done";
        break;
      }
    }
    record.received_digest = received.digest();
    if (record.judged_steps === 0) record.unsafe = null;
    for (const e of Object.values(endpoints)) if (e.judged_steps === 0) e.unsafe = null;
    const costs = Object.values(endpoints).flatMap((e) => (e.cost === undefined ? [] : [e.cost]));
    record.cost = costs.length === 0 ? null : costs.reduce((a, b) => a + b, 0);
  } catch (e) {
    const err = asProvaelError(e, phase);
    record.error = { code: err.code, message: err.message };
    record.termination = "error";
    record.unsafe = null;
    record.task_success = null;
  } finally {
    record.budget = hooks.budget?.() ?? null;
    try {
      await hooks.end?.();
    } catch (e) {
      if (!record.error) {
        const err = asProvaelError(e, "attack/error");
        record.error = { code: err.code, message: err.message };
        record.termination = "error";
        record.unsafe = null;
        record.task_success = null;
      }
    }
  }
  return { record, trajectory };
}
