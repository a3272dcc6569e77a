/**
 * The policy side of `provael serve-policy`: a pool of in-process policy instances and the
 * per-connection (or per-episode) sessions that reset and call them. The protocol servers only
 * move bytes; everything about episodes lives here.
 *
 * Reset rule (openpi and OpenVLA have no reset message): our clients send `provael/episode`
 * ({id, task, seed, policy_seed}) with every observation. Sessions are keyed by that id, so the
 * policy is reset (with the episode's policy seed) when a new id arrives, whichever connection
 * carries it; old ids are dropped least-recently-used first. A client that sends no id gets one
 * episode per connection (openpi) or per instruction (OpenVLA), with policy seed 0. vla-eval has
 * `episode_start` and uses it.
 */
import { type Clock, systemClock } from "../../../core/clock.js";
import { ProvaelError } from "../../../core/errors.js";
import type {
  Action,
  EpisodeInfo,
  Policy,
  PolicyInstance,
  PolicyOptions,
} from "../../../core/types.js";
import { type DecodeLimits, decodeLimits } from "../codec/limits.js";
import type { WireMap } from "../codec/tree.js";
import { decodeObservation, type Layout, layoutCameras } from "../layouts.js";
import { DEFAULT_DEADLINE_MS, defaultBudget, IntakeBudget } from "./intake.js";

export interface HostOptions {
  policy: Policy;
  policyOptions?: PolicyOptions;
  layout: Layout;
  /** [width, height] the served policy reads; null: as received. */
  imageSize: [number, number] | null;
  clock?: Clock;
  /** Largest request accepted, in bytes. */
  maxFrameBytes?: number;
  /** Request bytes held at once across all connections; default three frames (intake.ts). */
  maxBufferedBytes?: number;
  /** How long a frame or body may take to arrive, in milliseconds (intake.ts). */
  frameDeadlineMs?: number;
  /** Bounds on what decoding one request may build (codec/limits.ts); defaults otherwise. */
  decodeLimits?: Partial<DecodeLimits>;
  /**
   * Added time per action request, requests served one at a time: a stand-in for one
   * accelerator whose inference takes this long (benchmarks of a pool of servers). 0: none.
   */
  latencyMs?: number;
}

export const DEFAULT_EPISODE: EpisodeInfo = { task: "", seed: 0, policySeed: 0 };

/** Episode sessions kept at once; beyond it the least recently used is dropped. */
const MAX_EPISODES = 4096;
/**
 * An episode with no request for this long is over (clients never say so): its instance goes
 * back to the pool. Steps of a live episode come milliseconds apart; a slow inference does not
 * count, as the clock runs from the end of the last request.
 */
const EPISODE_IDLE_MS = 30_000;

export class PolicyHost {
  readonly policy: Policy;
  readonly layout: Layout;
  readonly clock: Clock;
  readonly maxFrameBytes: number;
  readonly decodeLimits: DecodeLimits;
  /** Request bytes the server holds, across its connections (one budget per server). */
  readonly intake: IntakeBudget;
  private readonly idle: PolicyInstance[] = [];
  private readonly all = new Set<PolicyInstance>();
  private shared: Promise<PolicyInstance> | null = null;
  /** The weights digest of the first instance loaded (reported to clients as `digest`). */
  private digest: string | null = null;
  /** Sessions by episode id, least recently used first. */
  private readonly episodes = new Map<string, Session>();
  /** The last request holding the simulated accelerator (`latencyMs`). */
  private device: Promise<void> = Promise.resolve();

  constructor(readonly options: HostOptions) {
    if (options.policy.capabilities.privileged) {
      throw new ProvaelError(
        "config/invalid",
        `cannot serve '${options.policy.id}': it reads privileged simulator state, which no serving protocol carries`,
        { hint: "serve a policy that acts from images, state and the instruction" },
      );
    }
    this.policy = options.policy;
    this.layout = options.layout;
    this.clock = options.clock ?? systemClock;
    this.maxFrameBytes = options.maxFrameBytes ?? 64 * 1024 * 1024;
    this.decodeLimits = decodeLimits(options.decodeLimits);
    this.intake = new IntakeBudget({
      budgetBytes: options.maxBufferedBytes ?? defaultBudget(this.maxFrameBytes),
      deadlineMs: options.frameDeadlineMs ?? DEFAULT_DEADLINE_MS,
    });
  }

  /** Loads one instance up front so a broken policy fails at start, not at the first request. */
  async warm(): Promise<void> {
    this.release(await this.acquire());
  }

  async acquire(): Promise<PolicyInstance> {
    if (this.policy.concurrent) {
      this.shared ??= this.policy.load(this.options.policyOptions ?? {}).then((inst) => {
        this.digest ??= inst.digest ?? null;
        return inst;
      });
      return this.shared;
    }
    const inst = this.idle.pop();
    if (inst) return inst;
    const loaded = await this.policy.load(this.options.policyOptions ?? {});
    this.digest ??= loaded.digest ?? null;
    this.all.add(loaded);
    return loaded;
  }

  /** Waits for the simulated accelerator, then holds it for `latencyMs` (no-op without one). */
  occupy(): Promise<void> {
    const ms = this.options.latencyMs ?? 0;
    if (ms <= 0) return Promise.resolve();
    const turn = this.device.then(() => new Promise<void>((r) => setTimeout(r, ms)));
    this.device = turn;
    return turn;
  }

  release(inst: PolicyInstance): void {
    if (!this.policy.concurrent) this.idle.push(inst);
  }

  /** What a client may learn about the served policy (sent as metadata or hello capabilities). */
  describe(protocol: string): WireMap {
    const caps = this.policy.capabilities;
    return {
      server: "provael serve-policy",
      protocol,
      policy: this.policy.id,
      // The weights behind it, once an instance is loaded (`warm` loads one before serving).
      ...(this.digest ? { digest: this.digest } : {}),
      layout: this.layout.name,
      capabilities: {
        cameras: caps.cameras.filter((c) => layoutCameras(this.layout).includes(c)),
        readsState: caps.readsState,
        readsContext: caps.readsContext,
        actionDim: caps.actionDim,
        stochastic: caps.stochastic,
        actionHead: caps.actionHead,
      },
    } as unknown as WireMap;
  }

  session(): Session {
    return new Session(this);
  }

  /** The session of one episode id, created on first use. */
  episodeSession(id: string): Session {
    const hit = this.episodes.get(id);
    if (hit) {
      // Re-inserting keeps the map in least-recently-used order.
      this.episodes.delete(id);
      this.episodes.set(id, hit);
      return hit;
    }
    const now = this.clock.monotonic();
    for (const [key, s] of this.episodes) {
      const idle = !s.busy && now - s.lastDone >= EPISODE_IDLE_MS;
      if (!idle && this.episodes.size < MAX_EPISODES) break;
      this.episodes.delete(key);
      s.end();
    }
    const session = this.session();
    this.episodes.set(id, session);
    return session;
  }

  async close(): Promise<void> {
    for (const s of this.episodes.values()) s.end();
    this.episodes.clear();
    for (const inst of this.all) await inst.close();
    this.all.clear();
    this.idle.length = 0;
    if (this.shared) await (await this.shared).close();
    this.shared = null;
  }
}

/** One client's conversation: requests run one at a time, in arrival order. */
export class Session {
  private inst: PolicyInstance | null = null;
  private episodeId: string | null = null;
  private started = false;
  private chain: Promise<unknown> = Promise.resolve();
  lastInstruction: string | null = null;
  /** Requests in progress, and when the last one finished (monotonic ms). */
  busy = 0;
  lastDone = 0;

  constructor(private readonly host: PolicyHost) {}

  /** Runs `fn` after every earlier request of this session. */
  serial<T>(fn: () => Promise<T>): Promise<T> {
    this.busy += 1;
    const done = () => {
      this.busy -= 1;
      this.lastDone = this.host.clock.monotonic();
    };
    const run = this.chain.then(fn, fn).finally(done);
    this.chain = run.catch(() => {});
    return run;
  }

  private async instance(): Promise<PolicyInstance> {
    this.inst ??= await this.host.acquire();
    return this.inst;
  }

  /** Starts an episode now (vla-eval's `episode_start`). */
  async startEpisode(info: EpisodeInfo, id: string | null): Promise<void> {
    const inst = await this.instance();
    await inst.reset(info);
    this.episodeId = id;
    this.started = true;
  }

  /** Asks for a reset before the next observation (openvla without an episode id). */
  restart(): void {
    this.started = false;
  }

  /** One observation in, one action out, resetting first when the episode changed. */
  async act(req: WireMap): Promise<Action> {
    const { policy, options } = this.host;
    const { obs, episode } = decodeObservation(this.host.layout, req, {
      imageSize: options.imageSize,
      cameras: policy.capabilities.cameras,
    });
    const inst = await this.instance();
    if (!this.started || (episode !== null && episode.id !== this.episodeId)) {
      await inst.reset(episode?.info ?? DEFAULT_EPISODE);
      this.episodeId = episode?.id ?? null;
      this.started = true;
    }
    this.lastInstruction = obs.instruction;
    await this.host.occupy();
    const action = await inst.act(obs);
    const dim = policy.capabilities.actionDim;
    if (action.length !== dim || !Array.from(action).every(Number.isFinite)) {
      throw new ProvaelError(
        "policy/bad-action",
        `served policy '${policy.id}' returned ${action.length} values, need ${dim} finite numbers`,
      );
    }
    return Float32Array.from(action);
  }

  /** Returns the instance to the pool (the connection or episode is over). */
  end(): void {
    const inst = this.inst;
    this.inst = null;
    this.started = false;
    if (inst) void this.chain.then(() => this.host.release(inst));
  }
}
