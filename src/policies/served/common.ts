/** What the served-policy clients share: capabilities from server metadata, episode ids. */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import { ProvaelError } from "../../core/errors.js";
import { ACTION_HEADS, type ActionHead, type PolicyCapabilities } from "../../core/types.js";
import { isWireMap, type WireValue } from "./codec/tree.js";

/** Capabilities of a served policy before the server says more. */
export function servedCapabilities(cameras: string[], chunk: number): PolicyCapabilities {
  return {
    cameras,
    camerasOptional: true,
    readsState: true,
    readsContext: false,
    privileged: false,
    actionDim: 7,
    chunk,
    differentiable: false,
    weights: false,
    stochastic: true,
    actionHead: "unknown",
  };
}

/**
 * Refines capabilities from what a `provael serve-policy` server advertises (its `provael` map in
 * the openpi metadata, the vla-eval hello capabilities, OpenVLA's `/provael/info`). Unknown
 * servers advertise nothing and the defaults stand. A remote policy never gets gradients,
 * weights or privileged state over the wire.
 */
export function refineCapabilities(
  base: PolicyCapabilities,
  info: WireValue | undefined,
  forwardsContext: boolean,
): PolicyCapabilities {
  if (!isWireMap(info)) return base;
  const caps = info.capabilities;
  if (!isWireMap(caps)) return base;
  const out = { ...base };
  if (Array.isArray(caps.cameras) && caps.cameras.every((c) => typeof c === "string")) {
    out.cameras = base.cameras.filter((c) => (caps.cameras as string[]).includes(c));
    out.camerasOptional = false;
  }
  if (typeof caps.readsState === "boolean") out.readsState = caps.readsState;
  if (typeof caps.readsContext === "boolean")
    out.readsContext = caps.readsContext && forwardsContext;
  if (typeof caps.stochastic === "boolean") out.stochastic = caps.stochastic;
  if (
    typeof caps.actionHead === "string" &&
    (ACTION_HEADS as readonly string[]).includes(caps.actionHead)
  )
    out.actionHead = caps.actionHead as ActionHead;
  return out;
}

/** A fresh id naming one episode on the wire (never recorded in a report). */
export function newEpisodeId(): string {
  return randomUUID();
}

/**
 * Which episode a call belongs to, for one instance shared by concurrent episodes. The runner
 * calls `reset(episode)` and then `act(obs)` from the same async chain but passes no episode
 * handle to `act`, so `begin` binds the episode's session to that chain (AsyncLocalStorage) and
 * `current` reads it back. A caller outside any chain (a plain sequential script) gets the
 * session it started last.
 */
export class EpisodeSessions<S extends object> {
  private readonly als = new AsyncLocalStorage<S>();
  private last: WeakRef<S> | null = null;

  begin(session: S): void {
    this.als.enterWith(session);
    this.last = new WeakRef(session);
  }

  current(policy: string): S {
    const s = this.als.getStore() ?? this.last?.deref();
    if (!s) {
      throw new ProvaelError("internal/invariant", `policy '${policy}' acted before any reset`, {
        hint: "call reset(episode) before act(obs)",
      });
    }
    return s;
  }
}
