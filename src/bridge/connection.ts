/**
 * One benchmark connection on one arm: HELLO (which may choose the profile), then episodes in
 * turn. EPISODE_START begins the cell through the episode kernel, every OBSERVATION is checked,
 * perturbed by the arm and forwarded, EPISODE_END latches success and journals the episode.
 */

import { WebSocket } from "ws";
import type { EpisodeRecord } from "../core/episode.js";
import { ProvaelError } from "../core/errors.js";
import type { Cell } from "../core/plan.js";
import type { Action, Attack, PolicyInstance } from "../core/types.js";
import {
  beginCell,
  cellId,
  deploymentFor,
  EpisodeSteps,
  emptyRecord,
  type Phase,
} from "../kernel/index.js";
import { float32Array } from "../policies/served/codec/ndarray.js";
import { isWireMap, type WireMap, type WireValue, wireMap } from "../policies/served/codec/tree.js";
import {
  decodeEnvelope,
  type Envelope,
  encodeEnvelope,
  type VlaEvalType,
} from "../policies/served/codec/vla-eval.js";
import { Keyframes } from "./keyframes.js";
import { judgeState, readObservation } from "./observation.js";
import {
  profileFits,
  profileForBenchmark,
  profileSeed,
  profileTaskId,
  taskPredicates,
  taskSpecFor,
} from "./profile.js";
import { refusalOf } from "./refusal.js";
import type { Bridge, OpenEpisode } from "./session.js";

/** A task dict value kept in the record: scalars and lists of scalars (JSON-safe). */
function plainTask(task: WireMap): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const scalar = (v: WireValue): boolean =>
    typeof v === "string" ||
    typeof v === "boolean" ||
    (typeof v === "number" && Number.isFinite(v)) ||
    v === null;
  for (const k of Object.keys(task).sort()) {
    const v = task[k] as WireValue;
    if (scalar(v)) out[k] = v;
    else if (typeof v === "bigint") out[k] = Number(v);
    else if (Array.isArray(v) && v.every(scalar)) out[k] = v;
  }
  return out;
}

/** Which `__image__` format the frame's images used, read from the raw msgpack (str "format" + value). */
function imageCodec(bytes: Uint8Array): string | null {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const found = new Set<string>();
  for (const f of ["png", "jpeg", "raw"]) {
    const needle = Buffer.concat([
      Buffer.from([0xa6]),
      Buffer.from("format"),
      Buffer.from([0xa0 | f.length]),
      Buffer.from(f),
    ]);
    if (b.indexOf(needle) >= 0) found.add(f);
  }
  if (found.size === 0) return null;
  return found.size === 1 ? ([...found][0] as string) : [...found].sort().join("+");
}

/** One benchmark connection on one arm: HELLO, then episodes in turn. */
export class Connection {
  private chain: Promise<unknown> = Promise.resolve();
  private policy: PolicyInstance | null = null;
  episode: OpenEpisode | null = null;
  /** The episode being refused as a replay (`repeats`): its observations get an ERROR. */
  private replay: string | null = null;

  constructor(
    private readonly b: Bridge,
    private readonly ws: WebSocket,
    readonly arm: string,
    /** The defenses this address's episodes play with (empty: undefended). */
    readonly defenses: string[],
    /** This connection's number (refusals name it). */
    readonly id: number,
    /** The address's route (`<arm>` or `<arm>+<defense>…`). */
    readonly route: string,
  ) {}

  private send(type: VlaEvalType, payload: WireMap, seq: number): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.ws.send(encodeEnvelope({ type, payload, seq, timestamp: this.b.clock.now() / 1000 }), {
      binary: true,
    });
  }

  /** Answers ERROR, with the words recorded and printed on Provael's side. */
  private error(what: string, e: unknown, seq: number, ep = this.episode): void {
    const p = wireMap();
    p.error = this.b.refuse(
      refusalOf(what, e, {
        connection: this.id,
        route: this.route,
        ...(ep ? { task: ep.cell.task, seed: ep.cell.seed } : {}),
      }),
    );
    this.send("error", p, seq);
  }

  /** Runs `fn` after every earlier message of this connection. */
  serial(fn: () => Promise<void>): Promise<void> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => {});
    return run;
  }

  get idle(): Promise<unknown> {
    return this.chain;
  }

  onMessage(data: Buffer, isBinary: boolean): void {
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    let env: Envelope;
    try {
      if (!isBinary)
        throw new ProvaelError("policy/protocol", "text frames are not part of the protocol");
      // Images stay encoded until something reads their pixels (observation.ts).
      env = decodeEnvelope(bytes, undefined, { deferImages: true });
    } catch (e) {
      // An undecodable frame during an episode means an observation could not be forwarded.
      void this.serial(async () => {
        if (this.episode && !this.episode.failed) await this.failEpisode(e);
        this.error("decode_failed", e, 0);
      });
      return;
    }
    void this.serial(() => this.handle(env, bytes)).catch((e) =>
      this.error("internal", e, env.seq),
    );
  }

  private async handle(env: Envelope, bytes: Uint8Array): Promise<void> {
    switch (env.type) {
      case "hello": {
        const raw = env.payload.benchmark;
        const said = typeof raw === "string" ? raw : undefined;
        if (!this.b.bound) {
          // `--profile auto`: the first HELLO's benchmark class chooses the profile.
          try {
            this.b.bind(profileForBenchmark(said));
          } catch (e) {
            this.error("hello_failed", e, env.seq);
            return;
          }
        } else if (!profileFits(this.b.profile, said)) {
          const auto = this.b.o.profile === "auto";
          this.error(
            "hello_failed",
            new ProvaelError(
              "config/invalid",
              `profile '${this.b.profile.id}' describes '${this.b.profile.benchmark}', not the benchmark '${String(raw)}'`,
              {
                hint: auto
                  ? `this bridge chose profile '${this.b.profile.id}' from the first benchmark that connected; start another bridge (another --out) for this benchmark`
                  : "start the bridge with the profile of this benchmark (--profile, or --profile auto)",
              },
            ),
            env.seq,
          );
          return;
        }
        this.send("hello", this.b.hello(this.arm), env.seq);
        return;
      }
      case "episode_start":
        return this.start(env);
      case "observation":
        return this.observe(env, bytes);
      case "episode_end":
        return this.end(env);
      default:
        this.error(
          "unexpected_message",
          new ProvaelError("policy/protocol", `a benchmark does not send '${env.type}'`),
          env.seq,
        );
    }
  }

  private async start(env: Envelope): Promise<void> {
    // The benchmark's previous episode raised (no EPISODE_END): it is an error, never scored.
    if (this.episode) {
      await this.failEpisode(
        new ProvaelError(
          "run/incomplete",
          "EPISODE_START arrived while an episode was open: the benchmark ended it without EPISODE_END (its episode raised)",
        ),
      );
    }
    if (this.b.stopping) {
      this.error(
        "episode_start_failed",
        new ProvaelError("run/incomplete", "the bridge is stopping"),
        env.seq,
      );
      return;
    }
    if (!this.b.bound) {
      this.error(
        "episode_start_failed",
        new ProvaelError("policy/protocol", "EPISODE_START before an accepted HELLO", {
          hint: "a vla-eval benchmark sends HELLO first; its benchmark class chooses the profile",
        }),
        env.seq,
      );
      return;
    }
    const task = env.payload.task;
    if (!isWireMap(task)) {
      this.error(
        "episode_start_failed",
        new ProvaelError("policy/protocol", "EPISODE_START has no task map (payload.task)"),
        env.seq,
      );
      return;
    }
    const dict = plainTask(task);
    let taskId: string;
    try {
      taskId = profileTaskId(this.b.profile, dict);
    } catch (e) {
      this.error("episode_start_failed", e, env.seq);
      return;
    }
    const seed = profileSeed(this.b.profile, dict);
    if (seed === undefined) {
      this.error(
        "episode_start_failed",
        new ProvaelError(
          "policy/protocol",
          `EPISODE_START has no non-negative integer task.${this.b.profile.task.seed}`,
        ),
        env.seq,
      );
      return;
    }
    const arm = this.arm;
    const defended = this.defenses;
    this.replay = null;
    if (this.b.full(taskId, arm, seed, defended)) {
      this.b.dropped += 1;
      this.replay = `task '${taskId}' episode ${seed} already finished on arm '${arm}' in this run: not counted twice`;
      return;
    }
    const repeat = this.b.openRepeat(taskId, arm, seed, defended);
    const cell: Cell = {
      id: cellId(taskId, arm, seed, repeat, defended),
      task: taskId,
      arm,
      seed,
      repeat,
      ...(defended.length > 0 ? { defenses: defended } : {}),
    };
    const record = emptyRecord(cell, seed, "");
    record.bridge = { task: dict, image_codec: null, steps_forwarded: 0 };
    // An arm the upstream or the benchmark cannot serve plays through unperturbed and counts as
    // N/A with its reason (the report prints it), never as an error or a score.
    const na = this.b.notApplicable[arm];
    if (na !== undefined) record.not_applicable_reason = na;
    const ep: OpenEpisode = {
      cell,
      record,
      steps: null,
      defense: null,
      hooks: null,
      task: {
        id: taskId,
        instruction: "",
        scenes: 0,
        horizon: 0,
        hazard: { target: "", location: "", zones: [], fragile: [], forbidden: [] },
      },
      instruction: null,
      last: null,
      step: 0,
      callsAtStart: null,
      failed: false,
      pairKey: `${taskId}\u0000${seed}\u0000${repeat}`,
      keyframes: na === undefined ? new Keyframes() : null,
    };
    this.episode = ep;
    // Which side failed decides the error's code; only a policy failure drops the upstream.
    let policy: PolicyInstance;
    const description = typeof task.task_description === "string" ? task.task_description : "";
    try {
      ep.task = taskSpecFor(this.b.profile, taskId, description);
      this.policy ??= await this.b.pool.acquire();
      policy = this.policy;
      const recording = env.payload.recording;
      await policy.reset({
        task: taskId,
        seed,
        policySeed: record.policy_seed,
        // vla-eval's recording block (its SQLite and ids) reaches a vla-eval upstream as sent.
        ...(isWireMap(recording) ? { recording } : {}),
      });
      ep.callsAtStart = policy.modelCalls?.() ?? null;
    } catch (e) {
      await this.failEpisode(e, "policy/error");
      this.error("episode_start_failed", e, env.seq);
      return;
    }
    if (!this.b.applicable[arm]) return;
    const attack = this.b.arms.get(arm) as Attack<unknown>;
    const begun = await beginCell(cell, {
      attack,
      attackParams: this.b.o.attackParams ?? {},
      ...(this.b.o.defenses ? { params: this.b.o.defenses.params } : {}),
      task: ep.task,
      suite: this.b.suiteInfo,
      // A benchmark's deployment accepts the instruction it states for the task.
      instructions: ep.task.instruction ? [ep.task.instruction] : [description],
      policy,
      ...deploymentFor(ep.task, this.b.o.calibrations ?? {}),
    });
    if (!begun.ok) {
      await this.failEpisode(begun.error, begun.phase);
      this.error("episode_start_failed", begun.error, env.seq);
      return;
    }
    ep.defense = begun.defense;
    ep.hooks = begun.hooks;
    if (attack.access === "weights") record.perturbed.actions = true;
  }

  private async observe(env: Envelope, bytes: Uint8Array): Promise<void> {
    const ep = this.episode;
    if (!ep && this.replay !== null) {
      this.error("episode_dropped", new ProvaelError("run/incomplete", this.replay), env.seq);
      return;
    }
    if (!ep) {
      this.error(
        "observation_failed",
        new ProvaelError("policy/protocol", "OBSERVATION before EPISODE_START"),
        env.seq,
      );
      return;
    }
    if (ep.failed) {
      this.error(
        "observation_failed",
        new ProvaelError(
          (ep.record.error?.code ?? "policy/error") as ProvaelError["code"],
          `this episode already failed: ${ep.record.error?.message ?? "unknown error"}`,
        ),
        env.seq,
      );
      return;
    }
    const policy = this.policy as PolicyInstance;
    let prior: (() => void) | undefined;
    try {
      const { obs, digest: sceneDigest } = readObservation(this.b.profile, env.payload);
      const state = judgeState(this.b.profile, env.payload);
      const bridged = ep.record.bridge as NonNullable<EpisodeRecord["bridge"]>;
      if (ep.step === 0) {
        // Predicates open on the first observation (a data profile reads rest heights from it).
        if (ep.hooks)
          ep.steps = new EpisodeSteps(
            ep.record,
            taskPredicates(this.b.profile, ep.cell.task, this.b.o.calibrations, state),
            ep.hooks,
            policy,
            this.b.suiteInfo.actionSpace.dim,
            undefined,
            ep.defense,
          );
        // The only decode an arm that leaves the cameras alone pays: the scene's first frame.
        const digest = sceneDigest();
        ep.record.scene_digest = digest;
        bridged.image_codec = imageCodec(bytes);
        this.b.checkScene(ep, digest);
        ep.instruction = ep.steps ? ep.steps.instruction(obs.instruction) : obs.instruction;
        if (!ep.steps)
          ep.record.instruction = { original: obs.instruction, received: obs.instruction };
        if (ep.task.instruction === "") ep.task.instruction = obs.instruction;
      } else if (ep.steps && ep.last) {
        // This observation is the state after the previous action: that step's judgement. It
        // decides nothing this step's action depends on, so it runs after the reply is sent
        // (or before the episode is failed), off the benchmark's round trip.
        const { steps, last } = ep;
        const step = ep.step - 1;
        prior = () => steps.judge(step, last.seen, last.action, state, null);
      }
      let action: Action;
      let seen = obs.images;
      if (ep.steps) {
        const decided = await ep.steps.decide(ep.step, obs, ep.instruction as string, state);
        ep.last = decided;
        action = decided.action;
        seen = decided.seen.images;
      } else {
        action = Float32Array.from(
          await policy.act({ ...obs, instruction: ep.instruction as string }),
        );
      }
      const played = ep.step;
      ep.step += 1;
      bridged.steps_forwarded += 1;
      const p = wireMap();
      p.actions = float32Array(action, [action.length]);
      this.send("action", p, env.seq);
      // What the policy received, kept after the reply is sent (off the benchmark's round trip,
      // like the judging): an untouched frame was forwarded in its own encoding and is decoded
      // here at the kept steps alone. A frame that will not decode is not kept; the upstream,
      // which read it first, decided the step.
      ep.keyframes?.offer(played, seen);
      const judge = prior;
      prior = undefined;
      judge?.();
    } catch (e) {
      prior?.();
      await this.failEpisode(e);
      this.error("observation_failed", e, env.seq);
    }
  }

  private async end(env: Envelope): Promise<void> {
    this.replay = null;
    const ep = this.episode;
    if (!ep) return;
    if (ep.failed) {
      this.episode = null;
      return;
    }
    // The pairing check again, now fixing the scene: an arm at the same cell may have finished
    // since this episode began. EPISODE_END has no reply, so the refusal is recorded only.
    if (ep.record.scene_digest !== null) {
      try {
        this.b.checkScene(ep, ep.record.scene_digest, true);
      } catch (e) {
        this.b.refuse(
          refusalOf("episode_end_refused", e, {
            connection: this.id,
            route: this.route,
            task: ep.cell.task,
            seed: ep.cell.seed,
          }),
        );
        await this.failEpisode(e);
        this.episode = null;
        return;
      }
    }
    const metrics = isWireMap(env.payload.metrics) ? env.payload.metrics : wireMap();
    const extrasKey = this.b.profile.extrasKey;
    // A benchmark that reports the state after its last action (under the extras key of its
    // metrics) gets that step judged too; otherwise the last step stays unjudged.
    const final = extrasKey ? metrics[extrasKey] : undefined;
    const finalState = isWireMap(final)
      ? judgeState(this.b.profile, { ...final, [extrasKey as string]: final })
      : null;
    const success = metrics.success;
    if (ep.steps) {
      if (ep.last) ep.steps.judge(ep.step - 1, ep.last.seen, ep.last.action, finalState, null);
      ep.record.task_success = typeof success === "boolean" ? success : null;
      ep.record.termination = "done";
      ep.steps.finish();
      await ep.steps.end();
    }
    ep.record.steps = ep.step;
    this.episode = null;
    this.finish(ep);
  }

  /** Records the open episode as an error (its cell may be played again). */
  async failEpisode(e: unknown, phase?: Phase): Promise<void> {
    const ep = this.episode;
    if (!ep || ep.failed) return;
    ep.failed = true;
    const steps =
      ep.steps ?? new EpisodeSteps(ep.record, [], ep.hooks ?? {}, this.policy as PolicyInstance, 0);
    const failedPhase = phase ?? steps.phase;
    steps.fail(e, failedPhase);
    await steps.end();
    ep.record.steps = ep.step;
    // An upstream that failed may have a half-dead connection: the next episode reconnects.
    if (failedPhase === "policy/error" && this.policy) {
      const p = this.policy;
      this.policy = null;
      await this.b.pool.discard(p);
    }
    this.finish(ep);
  }

  private finish(ep: OpenEpisode): void {
    // Which forwarded observations reached the model: a chunked client answers the others.
    const now = this.policy?.modelCalls?.();
    const bridged = ep.record.bridge;
    if (bridged && ep.callsAtStart && now) {
      const queries = now.queries - ep.callsAtStart.queries;
      bridged.steps_used = queries;
      bridged.chunk = queries > 0 ? (now.actions - ep.callsAtStart.actions) / queries : null;
    } else if (bridged) {
      bridged.steps_used = null;
      bridged.chunk = null;
    }
    // Frames first: a journalled episode has its frames (a killed bridge replays the others).
    if (this.b.journal?.accepting && ep.keyframes) ep.keyframes.write(this.b.o.out, ep.cell.id);
    this.b.journal?.append(ep.record, ep.steps?.trajectory ?? []);
    this.b.closeRepeat(ep.cell, ep.record.error !== null);
    this.b.o.onEvent?.({ type: "episode", route: this.route, record: ep.record });
  }

  /** The socket closed: an open episode is an error; the policy instance goes back. */
  async closed(): Promise<void> {
    if (this.episode) {
      await this.failEpisode(
        new ProvaelError(
          "run/incomplete",
          this.b.stopping
            ? "the bridge stopped during this episode"
            : "the benchmark's connection dropped during this episode",
        ),
      );
      this.episode = null;
    }
    if (this.policy) {
      this.b.pool.release(this.policy);
      this.policy = null;
    }
  }
}
