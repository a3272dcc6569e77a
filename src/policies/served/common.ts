/** What the served-policy clients share: capabilities from server metadata, episode ids. */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import { ProvaelError } from "../../core/errors.js";
import {
  ACTION_HEADS,
  type ActionHead,
  type PolicyCapabilities,
  type ServedModel,
} from "../../core/types.js";
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

/** Longest name or digest taken from a server's report: a label, not a document. */
const MAX_REPORTED = 200;
/** Keys that name the model, in the order they are looked for, at the top of what was reported. */
const NAME_KEYS = ["model_name", "model_id", "model", "checkpoint", "name"] as const;
const DIGEST_KEYS = ["model_digest", "checkpoint_digest", "digest", "sha256"] as const;

function reportedString(map: WireValue | undefined, keys: readonly string[]): string | null {
  if (!isWireMap(map)) return null;
  for (const k of keys) {
    const v = map[k];
    if (typeof v === "string" && v.trim() !== "") return v.trim().slice(0, MAX_REPORTED);
  }
  return null;
}

/**
 * The model behind a served policy, from what its server reported: the `provael` map of a
 * `provael serve-policy` server first (its `policy` id and weights `digest`), then the usual keys
 * of the report itself (`model_name`, `model`, `checkpoint`, … and `model_digest`, `digest`, …),
 * then `fallbackName` (vla-eval's `model_server`). Only short strings are taken.
 */
export function servedModelOf(
  protocol: string,
  reported: WireValue | undefined,
  provael: WireValue | undefined,
  fallbackName: WireValue | undefined = undefined,
): ServedModel {
  const fallback =
    typeof fallbackName === "string" && fallbackName.trim() !== ""
      ? fallbackName.trim().slice(0, MAX_REPORTED)
      : null;
  return {
    protocol,
    name:
      reportedString(provael, ["model", "policy"]) ??
      reportedString(reported, NAME_KEYS) ??
      fallback,
    digest: reportedString(provael, ["digest"]) ?? reportedString(reported, DIGEST_KEYS),
  };
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
