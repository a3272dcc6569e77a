/**
 * What a bridge shares across its benchmark connections: the arms and their addresses, the
 * profile it is bound to and the journal, the repeat numbers of each (task, arm, seed), the live
 * pairing check, the HELLO reply and the refusals.
 */

import { attacks } from "../attacks/index.js";
import type { Clock } from "../core/clock.js";
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
  SuiteCapabilities,
  TaskSpec,
} from "../core/types.js";
import type { DefenseChain } from "../defenses/chain.js";
import { cellId, type EpisodeSteps, notApplicableReason } from "../kernel/index.js";
import { policies } from "../policies/index.js";
import { isWireMap, type WireMap, type WireValue, wireMap } from "../policies/served/codec/tree.js";
import { actionSpec7, VLA_EVAL_PROTOCOL_VERSION } from "../policies/served/codec/vla-eval.js";
import { suites } from "../suites/index.js";
import type { Keyframes } from "./keyframes.js";
import type { BridgeOptions } from "./options.js";
import { routeName } from "./options.js";
import { type BenchmarkProfile, namedCameras, policyCamera } from "./profile.js";
import { type Refusal, refusalText } from "./refusal.js";
import { appendRefusal, BridgeJournal, type ClaimedDir } from "./rundir.js";
import { UpstreamPool } from "./upstream.js";

const DEFAULT_ACTION_SPACE: ActionSpace = {
  dim: 7,
  low: [-1, -1, -1, -1, -1, -1, -1],
  high: [1, 1, 1, 1, 1, 1, 1],
  names: ["dx", "dy", "dz", "droll", "dpitch", "dyaw", "gripper"],
};

export interface OpenEpisode {
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
  /** The frames kept of what the policy received (null for an N/A arm: nothing is played). */
  keyframes: Keyframes | null;
}

/** A live connection, as the shared state knows it (src/bridge/connection.ts). */
export interface LiveConnection {
  /** Runs `fn` after every earlier message of this connection. */
  serial(fn: () => Promise<void>): Promise<void>;
  /** The socket closed: its open episode is recorded as an error. */
  closed(): Promise<void>;
}

/** Everything the bridge shares across connections. */
export class Bridge {
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
  readonly connections = new Set<LiveConnection>();
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
    this.pool = new UpstreamPool(policies.get(o.policy), o.policyOptions, o.policyUrls ?? []);
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
    // Never `*` as a camera name: an arm that draws into a camera needs one the profile names.
    const cameras = namedCameras(profile);
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
    const unnamed =
      cameras.length === 0 && profile.images.keys.length > 0
        ? `needs a camera the profile names, and profile '${profile.id}' names none (images.keys: ['*'], every image the benchmark sends, under names known only from its observations); list the camera names in a profile's images.keys (docs/benchmarks.md, profile format)`
        : null;
    for (const [id, attack] of this.arms) {
      let why = notApplicableReason(attack, this.capabilities, suiteInfo.capabilities);
      // Under `*` a camera arm is N/A because no camera is named, not because none is sent.
      const withNamed = { ...suiteInfo.capabilities, cameras: ["named"] };
      if (why !== null && unnamed !== null)
        if (notApplicableReason(attack, this.capabilities, withNamed) === null) why = unnamed;
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
