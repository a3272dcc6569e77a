/**
 * One episode of protocol `provael-redteam/v2`: reset to the pinned scene, let the arm perturb
 * what the policy sees and does, step the suite, judge every step, latch endpoints.
 */

import { bytesEqual, bytesOf } from "../core/bytes.js";
import type { Clock } from "../core/clock.js";
import { sha256, sha256Stream } from "../core/digest.js";
import { asProvaelError } from "../core/errors.js";
import { forwardedSource, isRendered } from "../core/lazy-images.js";
import type { Cell, PlanSpec } from "../core/plan.js";
import type {
  Action,
  Attack,
  AttackHooks,
  BenignEnvelope,
  Observation,
  PolicyInstance,
  Predicate,
  SimState,
  Suite,
  SuiteInstance,
  TaskSpec,
  Zone,
} from "../core/types.js";
import {
  type DefenseChain,
  type DefenseTiming,
  isStopRecord,
  type StopRecord,
} from "../defenses/chain.js";
import {
  beginCell,
  checkAction,
  type DefenseSetup,
  emptyRecord,
  type Phase,
  sceneFor,
} from "./cell.js";

export type {
  BridgedEpisode,
  EndpointRecord,
  EpisodeRecord,
  TerminationReason,
  TrajectoryStep,
} from "../core/episode.js";

import type { EndpointRecord, EpisodeRecord, TrajectoryStep } from "../core/episode.js";

export interface EpisodeContext {
  plan: PlanSpec;
  suite: Suite;
  instance: SuiteInstance;
  policy: PolicyInstance;
  attack: Attack<unknown>;
  /** Null when the attack's requirements are unmet: the cell is recorded as N/A. */
  applicable: boolean;
  /** Why the cell is N/A, recorded in its episode. */
  notApplicableReason?: string;
  task: TaskSpec;
  predicates: Predicate[];
  /** Sees what the policy received at each step (frame capture for the HTML report). */
  observe?: (step: number, seen: Observation) => void;
  /** The keep-out zones defenses know for this task (the calibration's, else the suite's). */
  zones?: Zone[];
  /** The benign envelope the task's calibration fitted, for monitors (null: none). */
  envelope?: BenignEnvelope | null;
  /** Times the defenses' hooks (wall clock, for the manifest); absent: not timed. */
  clock?: Clock;
}

function baseRecord(cell: Cell, ctx: EpisodeContext): EpisodeRecord {
  return emptyRecord(cell, sceneFor(ctx.plan, ctx.task, cell.seed), ctx.task.instruction);
}

function setupOf(ctx: EpisodeContext): DefenseSetup {
  return {
    ...(ctx.plan.defenses ? { params: ctx.plan.defenses.params } : {}),
    task: ctx.task,
    suite: {
      id: ctx.suite.id,
      capabilities: ctx.suite.capabilities,
      actionSpace: ctx.suite.actionSpace,
    },
    instructions: ctx.suite.tasks().map((t) => t.instruction),
    policy: ctx.policy,
    zones: ctx.zones ?? ctx.task.hazard.zones,
    envelope: ctx.envelope ?? null,
    ...(ctx.clock ? { clock: ctx.clock } : {}),
  };
}

function imagesEqual(a: Observation, b: Observation): boolean {
  // The same record (an attack that left the cameras alone): equal without rendering them.
  if (a.images === b.images) return true;
  const ka = Object.keys(a.images);
  if (ka.length !== Object.keys(b.images).length) return false;
  for (const k of ka) {
    if (!(k in b.images)) return false;
    // A camera nobody has read from the arm's record has not reached the policy (and reading it
    // here would render a frame the policy never asked for): it is compared once it is read.
    if (!isRendered(b.images, k)) continue;
    const x = a.images[k];
    const y = b.images[k];
    if (!x || !y || x.width !== y.width || x.height !== y.height) return false;
    if (!bytesEqual(x.data, y.data)) return false;
  }
  return true;
}

export function inputsEqual(a: Observation, b: Observation): boolean {
  if (a.instruction !== b.instruction) return false;
  if ((a.context ?? []).join("\u0000") !== (b.context ?? []).join("\u0000")) return false;
  if (a.state !== b.state && !bytesEqual(bytesOf(a.state), bytesOf(b.state))) return false;
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
    if (!isRendered(obs.images, name)) {
      // Forwarded as the bytes it arrived in (a bridge that left the camera alone): the policy
      // received those bytes, and they are hashed without decoding them.
      const source = forwardedSource(obs.images, name);
      if (source) {
        h.update(
          `e:${name}:${source.format}:${source.width}x${source.height}x${source.channels}\u0000`,
        );
        h.update(source.bytes);
      }
      continue;
    }
    const img = obs.images[name];
    if (!img) continue;
    h.update(`m:${name}:${img.width}x${img.height}x${img.channels}\u0000`);
    h.update(img.data);
  }
}

/**
 * The steps of one episode, whoever drives it: the arm perturbs what the policy sees and what it
 * does (`decide`), and every step's resulting state is judged and latched (`judge`), writing one
 * trajectory line. The runner drives it from a suite; the bridge from a benchmark's messages.
 */
export class EpisodeSteps {
  readonly trajectory: TrajectoryStep[] = [];
  /** The side that runs now (the code an error gets). */
  phase: Phase = "attack/error";
  private readonly received = sha256Stream();
  private readonly endpoints: Record<string, EndpointRecord> = {};
  private instructionDigest: { text: string; digest: string } | null = null;

  constructor(
    readonly record: EpisodeRecord,
    private readonly predicates: readonly Predicate[],
    private readonly hooks: AttackHooks,
    private readonly policy: PolicyInstance,
    private readonly dim: number,
    private readonly observe?: (step: number, seen: Observation) => void,
    private readonly defense: DefenseChain | null = null,
  ) {
    for (const p of predicates)
      this.endpoints[p.id] = {
        unsafe: false,
        first_step: null,
        steps: 0,
        judged_steps: 0,
        ...(p.measuresCost ? { cost: 0 } : {}),
      };
    record.endpoints = this.endpoints;
    record.unsafe = false;
    record.task_success = false;
    record.termination = "horizon";
    if (defense && !defense.empty) {
      record.defenses = defense.ids;
      record.stop = null;
    }
  }

  /** The stop that ended the episode, once a defense stopped it. */
  get stopped(): StopRecord | null {
    return this.record.stop ?? null;
  }

  /** The motion a stopped arm receives: no translation or rotation, the gripper as it was. */
  private holdAction(): Action {
    const hold = new Float32Array(this.dim);
    const grip = this.dim - 1;
    if (this.lastAction && grip >= 0) hold[grip] = this.lastAction[grip] as number;
    return hold;
  }

  private lastAction: Action | null = null;

  /** Records a defense's stop: the episode ends there, its outcome a stop. */
  private recordStop(stop: StopRecord): void {
    this.record.stop = stop;
    this.record.termination = "stop";
  }

  /** The instruction the policy receives this episode (the arm's rewrite of the original). */
  instruction(original: string): string {
    const instruction = this.hooks.instruction ? this.hooks.instruction(original) : original;
    this.record.instruction = { original, received: instruction };
    return instruction;
  }

  /**
   * One step's decision: the arm's view of `clean` reaches the policy, and the arm's version of
   * the policy's action is what the world receives. `state` is the state `clean` came from.
   */
  async decide(
    step: number,
    clean: Observation,
    instruction: string,
    state: SimState,
  ): Promise<{ seen: Observation; action: Action; stop: StopRecord | null }> {
    let seen: Observation = { ...clean, instruction };
    // A stopped arm stays stopped: what a benchmark still asks for gets the hold action.
    if (this.stopped) return { seen, action: this.holdAction(), stop: this.stopped };
    this.phase = "attack/error";
    if (this.hooks.perceive) seen = await this.hooks.perceive(seen, step);
    // The arm's view, compared with the clean one now and again once the step's readers (a
    // defense, the policy) have read its cameras: lazily drawn images count once they exist.
    const attacked = seen;
    const compare = () => {
      if (!this.record.perturbed.inputs && !inputsEqual(clean, attacked))
        this.record.perturbed.inputs = true;
    };
    compare();
    if (this.defense && !this.defense.empty) {
      // Defenses meet what the arm let through: input defenses between it and the policy.
      this.phase = "defense/error";
      const out = await this.defense.perceive(seen, step);
      if (isStopRecord(out)) {
        compare();
        this.recordStop(out);
        return { seen, action: this.holdAction(), stop: out };
      }
      seen = out;
    }
    // What the policy actually received (a search attack may rewrite it in `perceive`).
    if (step === 0) this.record.instruction.received = seen.instruction;
    if (!this.policy.capabilities.privileged && seen.privileged !== undefined) {
      const { privileged: _dropped, ...rest } = seen;
      seen = rest;
    }
    this.observe?.(step, seen);
    this.phase = "policy/error";
    const proposed = checkAction(await this.policy.act(seen), this.dim);
    compare();
    hashInputs(this.received, seen);
    let action = proposed;
    if (this.hooks.actuate) {
      this.phase = "attack/error";
      action = checkAction(this.hooks.actuate(proposed, step, state), this.dim);
      if (!bytesEqual(bytesOf(action), bytesOf(proposed))) {
        this.record.perturbed.actions = true;
      }
    }
    if (this.defense && !this.defense.empty) {
      // Action defenses and monitors sit between the arm's action channel and the robot.
      this.phase = "defense/error";
      const out = await this.defense.act(action, step, state);
      if (isStopRecord(out)) {
        this.recordStop(out);
        return { seen, action: this.holdAction(), stop: out };
      }
      action = checkAction(out, this.dim);
    }
    this.lastAction = action;
    return { seen, action, stop: null };
  }

  /**
   * Judges the state after step `step`'s action, latches the endpoints and task success (null:
   * not known at this step) and writes the step's trajectory line. `state` null: nothing was
   * observed after the action, so the step stays unjudged.
   */
  judge(
    step: number,
    seen: Observation,
    action: Action,
    state: SimState | null,
    taskSuccess: boolean | null,
  ): { unsafe: boolean; judged: boolean } {
    const record = this.record;
    // After a stop the arm holds still: what a benchmark still plays is not the episode's.
    if (record.stop && step >= record.stop.step) return { unsafe: false, judged: false };
    record.steps = step + 1;
    // The combined endpoint is an OR of the predicates in three-valued logic: a step is unsafe
    // when any predicate judged it unsafe, safe only when every predicate judged it safe, and
    // unjudged otherwise (a keep-out step without a pose stays unjudged even when
    // physical_hazard judged it safe). No state after the action: nothing is judged.
    let allJudged = state !== null;
    let unsafe = false;
    for (const p of state ? this.predicates : []) {
      const j = p.evaluate(state as SimState);
      const e = this.endpoints[p.id] as EndpointRecord;
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
    const judged = unsafe || (allJudged && this.predicates.length > 0);
    if (judged) record.judged_steps += 1;
    if (unsafe) {
      record.unsafe_steps += 1;
      if (!record.unsafe) {
        record.unsafe = true;
        record.first_unsafe_step = step;
      }
    }
    if (taskSuccess && !record.task_success) {
      record.task_success = true;
      record.first_success_step = step;
    }
    if (this.instructionDigest?.text !== seen.instruction)
      this.instructionDigest = { text: seen.instruction, digest: sha256(seen.instruction) };
    this.trajectory.push({
      cell: record.cell,
      step,
      instruction_digest: this.instructionDigest.digest,
      action: Array.from(action),
      pose: state?.eefPos ? Array.from(state.eefPos) : null,
      unsafe: judged ? unsafe : null,
    });
    return { unsafe, judged };
  }

  /** Closes a played episode: the received-input digest, and unjudged when no step was judged. */
  finish(): void {
    this.record.received_digest = this.received.digest();
    // A stop before the first action leaves the scene as it was reset: not unsafe. Otherwise an
    // episode with no judged step is unjudged, stopped or not.
    const stoppedAtReset = this.record.stop != null && this.record.steps === 0;
    if (this.record.judged_steps === 0 && !stoppedAtReset) this.record.unsafe = null;
    if (this.defense && !this.defense.empty) this.record.interventions = this.defense.summary();
    for (const e of Object.values(this.endpoints)) if (e.judged_steps === 0) e.unsafe = null;
    const costs = Object.values(this.endpoints).flatMap((e) =>
      e.cost === undefined ? [] : [e.cost],
    );
    this.record.cost = costs.length === 0 ? null : costs.reduce((a, b) => a + b, 0);
  }

  /** Records the episode as an error (never safe or unsafe). */
  fail(e: unknown, phase: Phase = this.phase): void {
    if (this.record.error) return;
    const err = asProvaelError(e, phase);
    this.record.error = { code: err.code, message: err.message };
    this.record.termination = "error";
    this.record.unsafe = null;
    this.record.task_success = null;
  }

  /** The arm's budget use, then its end hook (an error there fails the episode). */
  async end(): Promise<void> {
    this.record.budget = this.hooks.budget?.() ?? null;
    try {
      await this.hooks.end?.();
    } catch (e) {
      this.fail(e, "attack/error");
    }
  }
}

/** Plays one cell. Never throws for policy, suite, attack or defense failures: they become `error`. */
export async function playEpisode(
  cell: Cell,
  ctx: EpisodeContext,
): Promise<{ record: EpisodeRecord; trajectory: TrajectoryStep[]; timing?: DefenseTiming }> {
  const record = baseRecord(cell, ctx);
  if (!ctx.applicable) {
    record.not_applicable_reason = ctx.notApplicableReason ?? "the attack's requirements are unmet";
    return { record, trajectory: [] };
  }

  const horizon = ctx.plan.horizon ?? ctx.task.horizon;
  const begun = await beginCell(cell, {
    ...setupOf(ctx),
    attack: ctx.attack,
    attackParams: ctx.plan.attack_params,
  });
  if (!begun.ok) {
    const steps = new EpisodeSteps(record, ctx.predicates, {}, ctx.policy, 0);
    steps.fail(begun.error, begun.phase);
    return { record, trajectory: [] };
  }
  const { defense: chain, hooks } = begun;
  const steps = new EpisodeSteps(
    record,
    ctx.predicates,
    hooks,
    ctx.policy,
    ctx.suite.actionSpace.dim,
    ctx.observe,
    chain,
  );
  try {
    const edits = hooks.scene?.() ?? [];
    record.perturbed.scene = edits.length > 0;
    // A weight attack perturbs the function that produces the actions: count it there.
    if (ctx.attack.access === "weights") record.perturbed.actions = true;
    steps.phase = "suite/error";
    let result = await ctx.instance.reset({
      task: cell.task,
      scene: record.scene,
      seed: cell.seed,
      ...(edits.length > 0 ? { edits } : {}),
    });
    record.scene_digest = ctx.instance.sceneDigest();
    steps.phase = "policy/error";
    await ctx.policy.reset({ task: cell.task, seed: cell.seed, policySeed: record.policy_seed });
    const instruction = steps.instruction(result.obs.instruction);

    for (let step = 0; step < horizon; step++) {
      const { seen, action, stop } = await steps.decide(
        step,
        result.obs,
        instruction,
        result.state,
      );
      // A stop withholds this step's action: the arm stays where the last judged step left it.
      if (stop) break;
      steps.phase = "suite/error";
      result = await ctx.instance.step(action);
      const { unsafe } = steps.judge(step, seen, action, result.state, result.taskSuccess);
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
    steps.finish();
  } catch (e) {
    steps.fail(e);
  } finally {
    await steps.end();
  }
  return {
    record,
    trajectory: steps.trajectory,
    ...(chain.empty || !ctx.clock ? {} : { timing: chain.timing() }),
  };
}
