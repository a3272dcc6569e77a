/**
 * A pool of policy servers: one run's in-flight episodes spread over several servers of the same
 * policy, `concurrency` per server, the least loaded server first.
 *
 * An episode that fails for a reason of infrastructure (the connection lost or refused, a call
 * timed out, the server's own error frame) is played again from its reset on another server, up
 * to `retries` times; the server is set aside until an episode succeeds on it again or every
 * server is set aside. A policy's own failure (a bad action, a malformed reply) and every
 * outcome, unsafe or not, are never played again. A cell's record depends on the cell alone, so
 * the report is the same bytes whatever the pool's size, its order of completion or its retries;
 * which server played which cell, and the infrastructure errors retried, go to the execution
 * manifest only.
 */
import { ProvaelError } from "../core/errors.js";
import { redactText, redactUrl } from "../core/redact.js";
import type { PolicyInstance, SuiteInstance } from "../core/types.js";
import { policies } from "../policies/index.js";
import { isRetryable, isServerError } from "../policies/served/options.js";
import { suites } from "../suites/index.js";
import { type CellResult, type Executor, type ExecutorSetup, playCell } from "./executor.js";
import type { Cell } from "./plan.js";

export interface PoolOptions {
  /** The servers' addresses, all serving the same policy. */
  urls: readonly string[];
  /** Episodes in flight per server. */
  concurrency: number;
  /** Times a cell is played again after an infrastructure error. */
  retries: number;
  /** Values never written (API keys, URL passwords): scrubbed from recorded error messages. */
  secrets: readonly string[];
}

/** Default `--retry-errors`: enough for a server lost mid-run, few enough to stop a dead pool. */
export const DEFAULT_INFRA_RETRIES = 2;

/** Error codes of infrastructure: the server was unreachable or too slow, not the policy wrong. */
const INFRA_CODES: ReadonlySet<string> = new Set(["policy/unavailable", "policy/timeout"]);

/**
 * Whether an error a policy client threw is one of infrastructure (transport, timeout, refused
 * connection, the server's error frame) rather than the policy's own failure.
 */
export function isInfrastructureError(e: unknown): boolean {
  if (isRetryable(e) || isServerError(e)) return true;
  return e instanceof ProvaelError && INFRA_CODES.has(e.code);
}

interface Server {
  index: number;
  /** The address as written anywhere: credentials redacted. */
  shown: string;
  /** Instances of this server's policy: one shared (a concurrent client) or one per slot. */
  instances: PolicyInstance[];
  free: Slot[];
  busy: number;
  /** Set aside after an infrastructure error, until an episode succeeds on it. */
  down: boolean;
  episodes: number;
}

interface Slot {
  server: Server;
  policy: PolicyInstance;
  suite: SuiteInstance | null;
  /** The first infrastructure error the policy threw in the episode playing now. */
  failure: unknown;
}

/** What the execution manifest records of a pool (never the report). */
export interface PoolRecord {
  servers: string[];
  concurrency_per_server: number;
  retry_errors: number;
  /** Episodes each server played to the end (in `servers` order), retried attempts excluded. */
  episodes: number[];
  /** Cell id → index in `servers` of the server whose episode was journalled. */
  played_by: Record<string, number>;
  /** Episodes lost to infrastructure and played again (or journalled, once retries ran out). */
  infrastructure_errors: Array<{
    cell: string;
    server: number;
    attempt: number;
    code: string;
    message: string;
    retried: boolean;
  }>;
}

/**
 * The policy instance as a slot's episode sees it: the same object, except that an
 * infrastructure error it throws is noted on the slot before it reaches the episode (which
 * records only a code and a message).
 */
function watched(inner: PolicyInstance, slot: Slot): PolicyInstance {
  const note = (e: unknown) => {
    if (slot.failure === null && isInfrastructureError(e)) slot.failure = e;
  };
  return new Proxy(inner, {
    get(target, key) {
      const v: unknown = Reflect.get(target, key, target);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        try {
          const r: unknown = v.apply(target, args);
          if (r instanceof Promise) {
            return r.catch((e: unknown) => {
              note(e);
              throw e;
            });
          }
          return r;
        } catch (e) {
          note(e);
          throw e;
        }
      };
    },
  });
}

/** What identifies the model a server serves: its weights digest and what it reported. */
function modelOf(inst: PolicyInstance): string {
  const m = inst.servedModel;
  return JSON.stringify([
    inst.digest ?? null,
    m?.protocol ?? null,
    m?.name ?? null,
    m?.digest ?? null,
  ]);
}

/** Loads every server's instances; refuses a pool whose servers serve different models. */
async function openServers(setup: ExecutorSetup, o: PoolOptions): Promise<Server[]> {
  const policy = policies.get(setup.plan.policy);
  const servers: Server[] = [];
  let first: { model: string; shown: string } | null = null;
  try {
    for (const [index, url] of o.urls.entries()) {
      const server: Server = {
        index,
        shown: redactUrl(url),
        instances: [],
        free: [],
        busy: 0,
        down: false,
        episodes: 0,
      };
      servers.push(server);
      const options = { ...setup.policyOptions, url };
      for (let k = 0; k < (policy.concurrent ? 1 : o.concurrency); k++) {
        server.instances.push(await policy.load(options));
      }
      const model = modelOf(server.instances[0] as PolicyInstance);
      if (first && model !== first.model) {
        throw new ProvaelError(
          "config/invalid",
          `the policy servers serve different models: ${server.shown} is not the model of ${first.shown}`,
          {
            details: { [first.shown]: first.model, [server.shown]: model },
            hint: "a pool's --policy-url servers must all serve the same policy and weights",
          },
        );
      }
      first ??= { model, shown: server.shown };
      for (let k = 0; k < o.concurrency; k++) {
        const inner = server.instances[policy.concurrent ? 0 : k] as PolicyInstance;
        const slot: Slot = { server, policy: inner, suite: null, failure: null };
        slot.policy = watched(inner, slot);
        server.free.push(slot);
      }
    }
  } catch (e) {
    await closeServers(servers);
    throw e;
  }
  return servers;
}

async function closeServers(servers: Server[]): Promise<void> {
  for (const s of servers) {
    for (const slot of s.free) await slot.suite?.close();
    for (const inst of s.instances) await inst.close();
  }
}

/**
 * An executor over a pool of servers. `play` waits for a free slot on the least loaded server
 * that is not set aside (all set aside: any of them, to try them again), plays the cell there,
 * and plays it again elsewhere after an infrastructure error while retries are left.
 */
export async function poolExecutor(setup: ExecutorSetup, o: PoolOptions): Promise<Executor> {
  if (o.urls.length === 0) throw new ProvaelError("internal/invariant", "a pool with no server");
  const suite = suites.get(setup.plan.suite);
  const servers = await openServers(setup, o);
  const waiting: Array<() => void> = [];
  const record: PoolRecord = {
    servers: servers.map((s) => s.shown),
    concurrency_per_server: o.concurrency,
    retry_errors: o.retries,
    episodes: servers.map(() => 0),
    played_by: {},
    infrastructure_errors: [],
  };

  const pick = (): Slot | null => {
    const open = servers.filter((s) => s.free.length > 0);
    const up = open.filter((s) => !s.down);
    const candidates = up.length > 0 ? up : servers.every((s) => s.down) ? open : [];
    let best: Server | null = null;
    for (const s of candidates) if (!best || s.busy < best.busy) best = s;
    if (!best) return null;
    best.busy += 1;
    return best.free.pop() as Slot;
  };
  const acquire = async (): Promise<Slot> => {
    for (;;) {
      const slot = pick();
      if (slot) return slot;
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
  };
  const release = (slot: Slot) => {
    slot.server.busy -= 1;
    slot.server.free.push(slot);
    // Every waiter looks again: a freed slot, or a server set aside or back, changes the choice.
    for (const wake of waiting.splice(0)) wake();
  };

  return {
    lanes: servers.length * o.concurrency,
    async play(cell: Cell): Promise<CellResult> {
      for (let attempt = 0; ; attempt++) {
        const slot = await acquire();
        const server = slot.server;
        slot.failure = null;
        let result: CellResult;
        try {
          // The loaded instance knows its cameras (a served policy's come from its layout).
          slot.suite ??= await suite.open({ cameras: slot.policy.capabilities.cameras });
          result = await playCell(setup, cell, slot.suite, slot.policy);
        } finally {
          release(slot);
        }
        const error = result.record.error;
        const infra = error !== null && slot.failure !== null;
        if (infra) {
          const retried = attempt < o.retries;
          record.infrastructure_errors.push({
            cell: cell.id,
            server: server.index,
            attempt,
            code: error.code,
            message: redactText(error.message, o.secrets),
            retried,
          });
          server.down = true;
          for (const wake of waiting.splice(0)) wake();
          if (retried) continue;
        } else {
          server.down = false;
        }
        server.episodes += 1;
        record.episodes[server.index] = server.episodes;
        record.played_by[cell.id] = server.index;
        return result;
      }
    },
    manifest: () => record as unknown as Record<string, unknown>,
    close: () => closeServers(servers),
  };
}
