/**
 * The defenses of one cell, begun together and met in loop order (inputs, actions, monitors):
 * the episode loop asks the chain, never a defense directly. The first stop wins and ends the
 * episode; the chain also measures the wall-clock time its hooks take, which goes to the
 * execution manifest and never into an episode record (report.json is byte-deterministic).
 */
import type { Clock } from "../core/clock.js";
import { Rng } from "../core/rng.js";
import type {
  Action,
  DefenseContext,
  DefenseHooks,
  DefenseStop,
  Observation,
  SimState,
} from "../core/types.js";
import { defenses, resolveDefenseParams } from "./index.js";

export type { StopRecord } from "../core/episode.js";

import type { StopRecord } from "../core/episode.js";

export const isStop = (v: unknown): v is DefenseStop =>
  typeof v === "object" &&
  v !== null &&
  typeof (v as DefenseStop).stop === "string" &&
  !ArrayBuffer.isView(v);

/** The generator a defense draws from in one cell: the same in every arm of that cell. */
export function defenseRng(defense: string, task: string, seed: number, repeat: number): Rng {
  return Rng.fromLabel(`defense:${defense}:${task}:${seed}:${repeat}`);
}

export type DefenseContextBase = Omit<DefenseContext<unknown>, "params" | "rng" | "time">;

/** Per-episode timing of the chain's hooks (wall clock, never in report.json). */
export interface DefenseTiming {
  ms: number;
  steps: number;
}

export class DefenseChain {
  private elapsed = 0;
  private timedSteps = new Set<number>();

  private constructor(
    readonly entries: readonly { id: string; hooks: DefenseHooks }[],
    private readonly clock: Clock | null,
  ) {}

  /** Begins every listed defense for one cell (ids already in loop order). */
  static async begin(
    ids: readonly string[],
    params: Record<string, Record<string, unknown>> | undefined,
    base: DefenseContextBase,
    clock: Clock | null = null,
  ): Promise<DefenseChain> {
    const entries: { id: string; hooks: DefenseHooks }[] = [];
    const chain = new DefenseChain(entries, clock);
    const time = <T>(fn: () => T): T => chain.timeDeferred(fn);
    for (const id of ids) {
      const hooks = await defenses.get(id).begin({
        ...base,
        params: resolveDefenseParams(id, params),
        rng: defenseRng(id, base.task.id, base.seed, base.repeat),
        time,
      });
      entries.push({ id, hooks });
    }
    return chain;
  }

  get empty(): boolean {
    return this.entries.length === 0;
  }

  get ids(): string[] {
    return this.entries.map((e) => e.id);
  }

  private async timed<T>(step: number, fn: () => Promise<T> | T): Promise<T> {
    this.lastStep = step;
    if (!this.clock) return fn();
    const t0 = this.clock.monotonic();
    try {
      return await fn();
    } finally {
      this.elapsed += this.clock.monotonic() - t0;
      this.timedSteps.add(step);
    }
  }

  /** The step whose hooks ran last: deferred work a defense times belongs to it. */
  private lastStep = 0;

  /** Times work a defense deferred past its hook (context `time`), on the step that deferred it. */
  private timeDeferred<T>(fn: () => T): T {
    if (!this.clock) return fn();
    const t0 = this.clock.monotonic();
    try {
      return fn();
    } finally {
      this.elapsed += this.clock.monotonic() - t0;
      this.timedSteps.add(this.lastStep);
    }
  }

  timing(): DefenseTiming {
    return { ms: this.elapsed, steps: this.timedSteps.size };
  }

  /** The instruction after every instruction hook, or the refusal; cached per distinct text. */
  private instructionCache: { text: string; out: string | StopRecord } | null = null;

  private instruction(text: string, step: number): string | StopRecord {
    if (this.instructionCache?.text === text) {
      const cached = this.instructionCache.out;
      return typeof cached === "string" ? cached : { ...cached, step };
    }
    let out: string | StopRecord = text;
    for (const { id, hooks } of this.entries) {
      if (!hooks.instruction || typeof out !== "string") continue;
      const r = hooks.instruction(out);
      out = isStop(r) ? { defense: id, step, reason: r.stop } : r;
    }
    this.instructionCache = { text, out };
    return out;
  }

  /**
   * What the policy receives: at the first step the start checks (a weight digest at load), then
   * the instruction hooks (once per distinct instruction), then the perceive hooks in order.
   */
  perceive(obs: Observation, step: number): Promise<Observation | StopRecord> {
    return this.timed(step, async () => {
      if (step === 0) {
        for (const { id, hooks } of this.entries) {
          const s = hooks.start ? await hooks.start() : null;
          if (s) return { defense: id, step, reason: s.stop };
        }
      }
      let out = obs;
      const instruction = this.instruction(obs.instruction, step);
      if (typeof instruction !== "string") return instruction;
      if (instruction !== obs.instruction) out = { ...out, instruction };
      for (const { id, hooks } of this.entries) {
        if (!hooks.perceive) continue;
        const r = await hooks.perceive(out, step);
        if (isStop(r)) return { defense: id, step, reason: r.stop };
        out = r;
      }
      return out;
    });
  }

  /** The action the robot receives after the action defenses, then the monitors' verdict. */
  act(action: Action, step: number, state: SimState): Promise<Action | StopRecord> {
    return this.timed(step, async () => {
      let out = action;
      for (const { id, hooks } of this.entries) {
        if (!hooks.actuate) continue;
        const r = hooks.actuate(out, step, state);
        if (isStop(r)) return { defense: id, step, reason: r.stop };
        out = r;
      }
      for (const { id, hooks } of this.entries) {
        if (!hooks.monitor) continue;
        const r = await hooks.monitor(step, out, state);
        if (r) return { defense: id, step, reason: r.stop };
      }
      return out;
    });
  }

  /** What each defense did in the episode, by defense id (ids sorted). */
  summary(): Record<string, Record<string, number>> {
    const out: Record<string, Record<string, number>> = {};
    for (const { id, hooks } of [...this.entries].sort((a, b) => (a.id < b.id ? -1 : 1)))
      out[id] = hooks.summary?.() ?? {};
    return out;
  }
}

export const isStopRecord = (v: unknown): v is StopRecord =>
  typeof v === "object" &&
  v !== null &&
  typeof (v as StopRecord).defense === "string" &&
  typeof (v as StopRecord).reason === "string";
