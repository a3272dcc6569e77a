/**
 * `provael bridge`: a vla-evaluation-harness model server (PROTOCOLS.md §4) that a benchmark
 * connects to as its policy. Each arm has its own path, `ws://HOST:PORT/arms/<arm>`. An
 * EPISODE_START opens a cell (task, `episode_idx` as the seed, the arm from the path, the repeat
 * counted from what already finished), every OBSERVATION is perturbed by the arm, forwarded to
 * the user's policy through our clients, and the arm's version of the action is answered; every
 * step is judged from the observation as the benchmark profile says. EPISODE_END latches success
 * and journals the episode, the same record and the same journal the runner writes.
 *
 * @example
 *   const bridge = await startBridge({ policy: "vla-eval", policyOptions: { url: "ws://127.0.0.1:8000" },
 *     arms: ["none", "roleplay"], profile: loadProfile("libero"), out: "runs/libero", host: "127.0.0.1", port: 9000 });
 *   bridge.armUrls.roleplay; // ws://127.0.0.1:9000/arms/roleplay
 *   await bridge.close(); // journal complete, report written
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer } from "ws";
import { attacks } from "../attacks/index.js";
import { resolveParams } from "../attacks/params.js";
import { type Clock, systemClock } from "../core/clock.js";
import type { EpisodeRecord } from "../core/episode.js";
import { ProvaelError } from "../core/errors.js";
import { TOOL_VERSION } from "../core/package-root.js";
import type { Cell } from "../core/plan.js";
import type {
  Action,
  ActionSpace,
  Attack,
  AttackHooks,
  Observation,
  PolicyCapabilities,
  PolicyInstance,
  PolicyOptions,
  SuiteCapabilities,
  TaskSpec,
} from "../core/types.js";
import type { DefenseChain } from "../defenses/chain.js";
import {
  beginCell,
  cellId,
  deploymentFor,
  EpisodeSteps,
  emptyRecord,
  type LoadedCalibration,
  notApplicableReason,
  type Phase,
} from "../kernel/index.js";
import { policies } from "../policies/index.js";
import { float32Array } from "../policies/served/codec/ndarray.js";
import { isWireMap, type WireMap, type WireValue, wireMap } from "../policies/served/codec/tree.js";
import {
  decodeEnvelope,
  type Envelope,
  encodeEnvelope,
  type VlaEvalType,
} from "../policies/served/codec/vla-eval.js";
import {
  hostForUrl,
  listen,
  newHttpServer,
  sendJson,
  shutdown,
} from "../policies/served/server/http.js";
import {
  DEFAULT_DEADLINE_MS,
  defaultBudget,
  IntakeBudget,
  watchWebSocket,
} from "../policies/served/server/intake.js";
import { suites } from "../suites/index.js";
import { judgeState, readObservation } from "./observation.js";
import {
  type BenchmarkProfile,
  loadProfile,
  policyCamera,
  profileFits,
  profileForBenchmark,
  profileSeed,
  profileTaskId,
  taskPredicates,
  taskSpecFor,
} from "./profile.js";
import { type Refusal, refusalOf, refusalText } from "./refusal.js";
import {
  appendRefusal,
  BridgeJournal,
  type BridgeRunResult,
  type ClaimedDir,
  claimBridgeDir,
  journalledProfile,
} from "./rundir.js";
import { UpstreamPool, upstreamControl } from "./upstream.js";

export const VLA_EVAL_PROTOCOL_VERSION = 1;
export const ARM_PATH = "/arms/";

export interface BridgeOptions {
  /** Upstream policy id (`vla-eval`, `openpi`, `openvla`, or an in-process policy). */
  policy: string;
  /** Everything the upstream client reads (address, layout, timeouts, secrets). */
  policyOptions: PolicyOptions;
  /** The behaviour-changing part of the policy options, recorded in the journal's plan. */
  planPolicyOptions?: Record<string, unknown>;
  arms: string[];
  attackParams?: Record<string, Record<string, unknown>>;
  /**
   * Defenses (ids in loop order) and their params; absent: none. Applied in every arm, or with
   * `compare` each arm is served twice: undefended at `/arms/<arm>` and defended at
   * `/arms/<arm>+<id>+<id>…` (the chain in loop order), as `provael attack --compare-defenses`.
   */
  defenses?: { ids: string[]; params: Record<string, Record<string, unknown>>; compare?: boolean };
  /**
   * The benchmark's profile, or `auto`: chosen from the first accepted HELLO's `benchmark`
   * import string (a resumed run keeps the profile its journal was written with).
   */
  profile: BenchmarkProfile | "auto";
  calibrations?: Record<string, LoadedCalibration>;
  out: string;
  host: string;
  port: number;
  /** Largest frame accepted from a benchmark (images travel in it). */
  maxFrameBytes?: number;
  /** Request bytes held at once across all connections; default three frames (intake.ts). */
  maxBufferedBytes?: number;
  /** How long a frame may take to arrive (ms); default 30 s (intake.ts). */
  frameDeadlineMs?: number;
  clock?: Clock;
  commandLine?: string[];
  /** Continue the bridged run in `out` (same plan, profile and weights) rather than refuse it. */
  resume?: boolean;
  /**
   * Told of every journalled episode and every refusal as it happens (a caller's progress
   * display and terminal lines); it must not throw.
   */
  onEvent?: (event: BridgeEvent) => void;
  /**
   * Repeats counted per (task, arm, seed): an episode that would be one more is answered with
   * an ERROR and never journalled (a relaunched benchmark replays what already finished).
   * Absent: every episode is a new repeat.
   */
  repeats?: number;
}

/** What the bridge tells its caller as the run goes. */
export type BridgeEvent =
  /** An episode was journalled (errored ones included: `record.error` says why). */
  | { type: "episode"; route: string; record: EpisodeRecord }
  /** The bridge answered a benchmark with ERROR (or refused its address): recorded too. */
  | { type: "refusal"; refusal: Refusal };

export interface RunningBridge {
  host: string;
  port: number;
  url: string;
  /**
   * Per route (the arm, or with compared defenses also `<arm>+<defense>…`), the address a
   * benchmark passes as `--server-url`.
   */
  armUrls: Record<string, string>;
  /** Arms whose requirements the upstream or the benchmark cannot meet (recorded as N/A). */
  notApplicable: Record<string, string>;
  /** Episodes journalled so far. */
  finished(): number;
  /** Episodes refused as replays of finished repeats (`repeats`). */
  dropped(): number;
  /** Stops: open episodes are recorded as errors, the journal closed, the report written. */
  close(): Promise<BridgeRunResult>;
}

/** The 7-D action spec of our suites (and LIBERO's), in vla-eval's vocabulary. */
export function actionSpec7(): WireMap {
  return {
    position: { name: "position", dims: 3, format: "delta_xyz", range: [-1, 1] },
    rotation: { name: "rotation", dims: 3, format: "delta_rpy", range: [-1, 1] },
    gripper: {
      name: "gripper",
      dims: 1,
      format: "binary_close_positive",
      range: [-1, 1],
      description: "-1 open, +1 close",
    },
  } as unknown as WireMap;
}

const DEFAULT_ACTION_SPACE: ActionSpace = {
  dim: 7,
  low: [-1, -1, -1, -1, -1, -1, -1],
  high: [1, 1, 1, 1, 1, 1, 1],
  names: ["dx", "dy", "dz", "droll", "dpitch", "dyaw", "gripper"],
};

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

/** The address of an arm's defended twin when defenses are compared: `<arm>+<id>+<id>…`. */
export function routeName(arm: string, defenses: readonly string[]): string {
  return [arm, ...defenses].join("+");
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

interface OpenEpisode {
  cell: Cell;
  record: EpisodeRecord;
  /** Null for an N/A arm: observations are forwarded unperturbed, nothing is judged. */
  steps: EpisodeSteps | null;
  /** The cell's defenses (an empty chain when the bridge runs none). */
  defense: DefenseChain | null;
  /** The arm's hooks (null for an N/A arm); its steps open at the first observation. */
  hooks: AttackHooks | null;
  task: TaskSpec;
  instruction: string | null;
  last: { seen: Observation; action: Action } | null;
  step: number;
  /** The upstream's model calls when the episode began (null: it cannot tell). */
  callsAtStart: { queries: number; actions: number } | null;
  /** The episode already failed: further observations get an ERROR. */
  failed: boolean;
  pairKey: string;
}

/** Everything the bridge shares across connections. */
class Bridge {
  readonly pool: UpstreamPool;
  /** Set once the profile is known (at start, or from the first HELLO with `--profile auto`). */
  suiteInfo!: { id: string; capabilities: SuiteCapabilities; actionSpace: ActionSpace };
  profile!: BenchmarkProfile;
  /** The run's journal, opened once the profile is known. */
  journal: BridgeJournal | null = null;
  readonly applicable: Record<string, boolean> = {};
  readonly notApplicable: Record<string, string> = {};
  readonly arms: Map<string, Attack<unknown>>;
  /** Each address's arm and the defenses its episodes play with (`/arms/<route>`). */
  readonly routes = new Map<string, { arm: string; defenses: string[] }>();
  /** Per (task, arm, seed): the repeats finished without error, and those in flight. */
  private readonly counts = new Map<string, { done: Set<number>; open: Set<number> }>();
  /**
   * Per (task, seed, repeat): the scene digest of the first episode there that finished without
   * error, for the pairing check. An errored episode never sets it, so a bad first observation
   * cannot lock a cell out for the rest of the run.
   */
  private readonly scenes = new Map<string, { arm: string; digest: string }>();
  readonly connections = new Set<Connection>();
  /** Connections opened so far (each is numbered in refusals). */
  opened = 0;
  stopping = false;
  /** Episodes refused because their (task, arm, seed) already has its `repeats`. */
  dropped = 0;

  constructor(
    readonly o: BridgeOptions,
    readonly capabilities: PolicyCapabilities,
    readonly handshake: Readonly<Record<string, unknown>> | null,
    readonly clock: Clock,
    /** The run directory, held from the start (the journal may open later). */
    private readonly claimed: ClaimedDir,
    private readonly policyDigest: string | null,
  ) {
    this.pool = new UpstreamPool(policies.get(o.policy), o.policyOptions);
    this.arms = new Map(o.arms.map((a) => [a, attacks.get(a)]));
    const ids = o.defenses?.ids ?? [];
    for (const a of o.arms) {
      if (o.defenses?.compare && ids.length > 0) {
        this.routes.set(a, { arm: a, defenses: [] });
        this.routes.set(routeName(a, ids), { arm: a, defenses: ids });
      } else this.routes.set(a, { arm: a, defenses: ids });
    }
  }

  get bound(): boolean {
    return this.journal !== null;
  }

  /**
   * Binds the bridge to its benchmark's profile: what the benchmark offers the arms (each arm's
   * applicability is decided here), and the journal, which opens now (a resumed run's episodes
   * counted in).
   */
  bind(profile: BenchmarkProfile): void {
    const o = this.o;
    const suite = profile.suite !== undefined ? suites.get(profile.suite) : null;
    const cameras = profile.images.keys.map((k) => policyCamera(profile, k));
    const suiteInfo = {
      id: suite?.id ?? profile.id,
      // The benchmark plays its own scenes: the bridge cannot edit them.
      capabilities: {
        cameras,
        stateDim: suite?.capabilities.stateDim ?? 0,
        sceneEditing: false,
        physics: true,
        // Fitting renders the suite's own scenes: only a suite-backed profile has one to open.
        fitScenes: suite !== null,
        // A suite-backed profile's camera models place patches where the runner places them.
        ...(suite?.capabilities.cameraModels
          ? { cameraModels: suite.capabilities.cameraModels }
          : {}),
      },
      actionSpace: suite?.actionSpace ?? DEFAULT_ACTION_SPACE,
    };
    const journal = BridgeJournal.create(
      { ...o, profile },
      this.policyDigest,
      this.clock,
      o.resume ?? false,
      this.claimed,
    );
    this.profile = profile;
    this.suiteInfo = suiteInfo;
    for (const [id, attack] of this.arms) {
      const why = notApplicableReason(attack, this.capabilities, suiteInfo.capabilities);
      this.applicable[id] = why === null;
      if (why !== null) this.notApplicable[id] = why;
    }
    this.journal = journal;
    this.seed(journal.previous);
  }

  /** Lets go of the run directory without a report (start-up failed). */
  abandon(): void {
    if (this.journal) this.journal.abandon();
    else this.claimed.lock.release();
  }

  /** Records and tells a refusal; the returned text is what the ERROR payload carries. */
  refuse(r: Refusal): string {
    appendRefusal(this.o.out, r);
    this.o.onEvent?.({ type: "refusal", refusal: r });
    return refusalText(r);
  }

  /** The HELLO reply: the upstream's action spec, and what the profile needs observed. */
  hello(arm: string): WireMap {
    const p = wireMap();
    p.harness_version = `provael ${TOOL_VERSION}`;
    p.protocol_version = VLA_EVAL_PROTOCOL_VERSION;
    p.model_server = "ProvaelBridge";
    const caps = wireMap();
    caps.provael = { bridge: true, arm, profile: this.profile.id } as unknown as WireMap;
    p.capabilities = caps;
    const upstream = this.handshake;
    // What the upstream asks the benchmark for (a vla-eval model server's own HELLO), with what
    // the profile needs to judge on top: the benchmark merges these into its parameters.
    const asked =
      upstream && isWireMap(upstream.observation_params as WireValue)
        ? (upstream.observation_params as Record<string, unknown>)
        : {};
    const params = { ...asked, ...this.profile.observationParams } as Record<string, unknown>;
    // Ask for an optional image when the upstream reads the camera it maps to (or asked for it).
    for (const [key, param] of Object.entries(this.profile.images.request))
      params[param] =
        asked[param] === true ||
        this.capabilities.cameras.includes(policyCamera(this.profile, key));
    p.observation_params = params as unknown as WireMap;
    p.action_spec = (
      upstream && isWireMap(upstream.action_spec as WireValue)
        ? upstream.action_spec
        : actionSpec7()
    ) as WireMap;
    if (upstream && isWireMap(upstream.observation_spec as WireValue))
      p.observation_spec = upstream.observation_spec as WireMap;
    return p;
  }

  private countKey(task: string, arm: string, seed: number, defenses: readonly string[]) {
    return `${task}\u0000${arm}\u0000${seed}\u0000${defenses.join(",")}`;
  }

  /**
   * The repeat of a new episode: the first of its (task, arm, seed) that has neither finished
   * nor is in flight. An errored episode frees its repeat, so a replay is the same cell and
   * supersedes it; a resumed run counts from what its journal holds.
   */
  openRepeat(task: string, arm: string, seed: number, defenses: readonly string[]): number {
    const key = this.countKey(task, arm, seed, defenses);
    const c = this.counts.get(key) ?? { done: new Set<number>(), open: new Set<number>() };
    this.counts.set(key, c);
    let repeat = 0;
    while (c.done.has(repeat) || c.open.has(repeat)) repeat += 1;
    c.open.add(repeat);
    return repeat;
  }

  /** Whether (task, arm, seed) already has its `repeats`, finished or in flight. */
  full(task: string, arm: string, seed: number, defenses: readonly string[]): boolean {
    if (this.o.repeats === undefined) return false;
    const c = this.counts.get(this.countKey(task, arm, seed, defenses));
    return c !== undefined && c.done.size + c.open.size >= this.o.repeats;
  }

  /** Closes an episode's repeat: finished, or freed when it errored. */
  closeRepeat(cell: Cell, errored: boolean): void {
    const c = this.counts.get(this.countKey(cell.task, cell.arm, cell.seed, cell.defenses ?? []));
    if (!c) return;
    c.open.delete(cell.repeat);
    if (!errored) c.done.add(cell.repeat);
  }

  /** What a resumed run's journal already holds: finished repeats and first scenes. */
  seed(records: readonly EpisodeRecord[]): void {
    for (const r of records) {
      if (r.error !== null) continue;
      // The cell id tells a defended episode from its undefended twin.
      const ids = this.o.defenses?.ids ?? [];
      const defended = ids.length > 0 && cellId(r.task, r.arm, r.seed, r.repeat, ids) === r.cell;
      const key = this.countKey(r.task, r.arm, r.seed, defended ? ids : []);
      const c = this.counts.get(key) ?? { done: new Set<number>(), open: new Set<number>() };
      c.done.add(r.repeat);
      this.counts.set(key, c);
      const pair = `${r.task}\u0000${r.seed}\u0000${r.repeat}`;
      if (r.scene_digest && !this.scenes.has(pair))
        this.scenes.set(pair, { arm: r.arm, digest: r.scene_digest });
    }
  }

  /**
   * The pairing check, live: an episode's first observation must match the scene that the
   * first episode to finish without error at its (task, seed, repeat) started from. Checked at
   * the first observation and again when the episode ends (an arm at the same cell may have
   * finished meanwhile); only a good episode's end fixes the scene.
   */
  checkScene(ep: OpenEpisode, digest: string, commit = false): void {
    const first = this.scenes.get(ep.pairKey);
    if (!first) {
      if (commit) this.scenes.set(ep.pairKey, { arm: ep.cell.arm, digest });
      return;
    }
    if (first.digest !== digest) {
      throw new ProvaelError(
        "run/scene-mismatch",
        `arms '${first.arm}' and '${ep.cell.arm}' started task '${ep.cell.task}' seed ${ep.cell.seed} from different first observations`,
        {
          details: { task: ep.cell.task, seed: ep.cell.seed, digests: [first.digest, digest] },
          hint: "every arm must play the same episodes: run the same vla-eval config, with the same episode indices, for each arm",
        },
      );
    }
  }
}

/** One benchmark connection on one arm: HELLO, then episodes in turn. */
class Connection {
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
      if (ep.steps) {
        const decided = await ep.steps.decide(ep.step, obs, ep.instruction as string, state);
        ep.last = decided;
        action = decided.action;
      } else {
        action = Float32Array.from(
          await policy.act({ ...obs, instruction: ep.instruction as string }),
        );
      }
      ep.step += 1;
      bridged.steps_forwarded += 1;
      const p = wireMap();
      p.actions = float32Array(action, [action.length]);
      this.send("action", p, env.seq);
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

/** Starts the bridge: probes the upstream, opens the journal, listens. */
export async function startBridge(o: BridgeOptions): Promise<RunningBridge> {
  const clock = o.clock ?? systemClock;
  if (o.arms.length === 0) throw new ProvaelError("config/invalid", "the attack list is empty");
  for (const a of o.arms) resolveParams(attacks.get(a), o.attackParams ?? {});
  const policy = policies.get(o.policy);
  // One instance up front: the upstream's capabilities, digest and HELLO, and a clear error now
  // rather than at the first episode when it is not reachable.
  const probe = await policy.load(o.policyOptions);
  let capabilities: PolicyCapabilities;
  let digest: string | null;
  let handshake: Readonly<Record<string, unknown>> | null;
  try {
    capabilities = { ...probe.capabilities, queryable: typeof probe.query === "function" };
    digest = probe.digest ?? null;
    handshake = probe.handshake ?? null;
  } finally {
    await probe.close();
  }
  // One writer per directory from now on; the journal opens once the profile is known.
  const claimed = claimBridgeDir(o.out);
  const b = new Bridge(o, capabilities, handshake, clock, claimed, digest);
  try {
    const journalled = o.profile === "auto" && o.resume ? journalledProfile(claimed, o.out) : null;
    const chosen = o.profile !== "auto" ? o.profile : journalled ? loadProfile(journalled) : null;
    if (chosen) b.bind(chosen);
  } catch (e) {
    // The directory is let go of: a library caller may open it again in this process.
    b.abandon();
    throw e;
  }

  const maxFrame = o.maxFrameBytes ?? 256 * 1024 * 1024;
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: maxFrame,
  });
  const intake = new IntakeBudget({
    budgetBytes: o.maxBufferedBytes ?? defaultBudget(maxFrame),
    deadlineMs: o.frameDeadlineMs ?? DEFAULT_DEADLINE_MS,
  });
  const control = upstreamControl(o.policy, o.policyOptions);
  const http = newHttpServer((req, res) => {
    const [path, query] = (req.url ?? "").split(/(?=\?)/, 2) as [string, string | undefined];
    // Ready only once the upstream answers (a launcher polls /health before the benchmark).
    if (req.method === "GET" && path === "/health") {
      void control
        .health()
        .then((h) =>
          h.ok
            ? sendJson(res, 200, '{"status": "ok"}')
            : sendJson(res, 503, JSON.stringify({ status: "waiting", detail: h.detail })),
        );
      return;
    }
    // A vla-eval upstream's control plane answers for itself (`?max_batch_size=8` included).
    if (req.method === "GET" && path === "/config") {
      void control
        .config(query ?? "")
        .then((c) =>
          c
            ? sendJson(res, c.status, c.body)
            : sendJson(res, 200, '{"max_batch_size": 1, "max_wait_time": 0.0}'),
        );
      return;
    }
    if (req.method === "GET" && (path === "/arms" || path === "/"))
      return sendJson(res, 200, JSON.stringify({ arms: urls, not_applicable: b.notApplicable }));
    res.writeHead(426, { "content-type": "text/plain", upgrade: "websocket" });
    res.end("WebSocket upgrade expected at /arms/<arm>.\n");
  });
  http.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = decodeURIComponent(req.url?.split("?")[0] ?? "");
    const name = path.startsWith(ARM_PATH) ? path.slice(ARM_PATH.length).replace(/\/+$/, "") : "";
    const route = b.routes.get(name);
    if (!route || b.stopping) {
      // An address that names no arm is a refusal too (a typo in --server-url): recorded and
      // printed with the addresses there are.
      const body = b.stopping
        ? "the bridge is stopping\n"
        : `${b.refuse(
            refusalOf(
              "unknown_arm",
              new ProvaelError("config/invalid", `no arm at '${path}'`, {
                hint: `pass one of ${Object.values(urls).join(", ")} as --server-url`,
              }),
              { connection: ++b.opened, route: null },
            ),
          )}\n`;
      socket.end(
        `HTTP/1.1 ${b.stopping ? 503 : 404} ${b.stopping ? "Service Unavailable" : "Not Found"}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      watchWebSocket(intake, ws, socket);
      const conn = new Connection(b, ws, route.arm, route.defenses, ++b.opened, name);
      b.connections.add(conn);
      ws.on("message", (data: Buffer, isBinary: boolean) => conn.onMessage(data, isBinary));
      const gone = () => {
        void conn.serial(() => conn.closed()).finally(() => b.connections.delete(conn));
      };
      ws.once("close", gone);
      ws.on("error", () => ws.terminate());
    });
  });
  let addr: Awaited<ReturnType<typeof listen>>;
  try {
    addr = await listen(http, o.host, o.port);
  } catch (e) {
    b.abandon();
    throw e;
  }
  const base = `ws://${hostForUrl(o.host)}:${addr.port}`;
  const urls: Record<string, string> = Object.fromEntries(
    [...b.routes.keys()].map((r) => [
      r,
      `${base}${ARM_PATH}${encodeURIComponent(r).replace(/%2B/g, "+")}`,
    ]),
  );
  let closing: Promise<BridgeRunResult> | null = null;
  return {
    host: o.host,
    port: addr.port,
    url: base,
    armUrls: urls,
    notApplicable: b.notApplicable,
    finished: () => b.journal?.count ?? 0,
    dropped: () => b.dropped,
    close() {
      closing ??= (async () => {
        b.stopping = true;
        const conns = [...b.connections];
        for (const c of wss.clients) c.close(1001, "bridge stopping");
        // Each connection records its open episode once its current message is done.
        await Promise.all(conns.map((c) => c.serial(() => c.closed())));
        for (const c of wss.clients) c.terminate();
        wss.close();
        await shutdown(http);
        await b.pool.close();
        if (!b.journal) {
          b.abandon();
          throw new ProvaelError(
            "run/incomplete",
            "no benchmark's HELLO was accepted, so there is nothing to report",
            {
              hint: `point the benchmark at one of ${Object.values(urls).join(", ")}; its HELLO chooses the profile (--profile auto), or name one with --profile`,
            },
          );
        }
        return b.journal.finish(o.commandLine ?? []);
      })();
      return closing;
    },
  };
}
