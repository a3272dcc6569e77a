/**
 * The protocol-neutral value tree a layout builds and a server reads: JSON-like data whose leaves
 * may be arrays (NdArray). Each protocol codec turns it into its own bytes and back.
 */
import { ProvaelError } from "../../../core/errors.js";
import { NdArray } from "./ndarray.js";

export type WireValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | NdArray
  | WireValue[]
  | WireMap;

/** A map with string keys. Built with a null prototype so a peer's `__proto__` key is inert. */
export interface WireMap {
  [key: string]: WireValue;
}

export function wireMap(): WireMap {
  return Object.create(null) as WireMap;
}

export function isWireMap(v: unknown): v is WireMap {
  return (
    typeof v === "object" &&
    v !== null &&
    !Array.isArray(v) &&
    !(v instanceof NdArray) &&
    !(v instanceof Uint8Array)
  );
}

function shapeError(what: string, want: string, got: unknown, hint?: string): ProvaelError {
  return new ProvaelError("policy/protocol", `${what} must be ${want}, got ${describe(got)}`, {
    details: { field: what },
    ...(hint ? { hint } : {}),
  });
}

/** A short description of a value for error messages (never its full content). */
export function describe(v: unknown): string {
  if (v === undefined) return "nothing (missing)";
  if (v === null) return "nil";
  if (v instanceof NdArray) return `an array of dtype ${v.dtype} and shape [${v.shape.join(", ")}]`;
  if (v instanceof Uint8Array) return `${v.length} raw bytes`;
  if (Array.isArray(v)) return `a list of ${v.length}`;
  if (isWireMap(v)) return `a map with keys [${Object.keys(v).slice(0, 6).join(", ")}]`;
  if (typeof v === "string") return `the string ${JSON.stringify(v.slice(0, 60))}`;
  return `${typeof v} ${String(v)}`;
}

/**
 * The array at `what`, with a precise error when the peer sent something else. A map carrying
 * `__ndarray__` under a str key is the classic openpi mistake (the markers must be msgpack bin).
 */
export function asNdArray(v: WireValue | undefined, what: string): NdArray {
  if (v instanceof NdArray) return v;
  if (isWireMap(v) && "__ndarray__" in v) {
    throw new ProvaelError(
      "policy/protocol",
      `${what} must be an array, got a map whose __ndarray__, data, dtype and shape keys are msgpack str; openpi arrays use msgpack bin keys`,
      { details: { field: what }, hint: "see PROTOCOLS.md §1.3: the marker keys are byte strings" },
    );
  }
  throw shapeError(what, "an array", v);
}

export function asString(v: WireValue | undefined, what: string): string {
  if (typeof v === "string") return v;
  // DROID's transform accepts a UTF-8 byte string prompt; so do we.
  if (v instanceof Uint8Array) return new TextDecoder("utf-8", { fatal: false }).decode(v);
  throw shapeError(what, "a string", v);
}

export function asMap(v: WireValue | undefined, what: string): WireMap {
  if (isWireMap(v)) return v;
  throw shapeError(what, "a map", v);
}

/** Reads a value at a key path (`["images", "cam_high"]`). */
export function getPath(root: WireMap, path: readonly string[]): WireValue | undefined {
  let cur: WireValue | undefined = root;
  for (const k of path) {
    if (!isWireMap(cur)) return undefined;
    cur = Object.hasOwn(cur, k) ? cur[k] : undefined;
  }
  return cur;
}

/** Writes a value at a key path, creating intermediate maps. */
export function setPath(root: WireMap, path: readonly string[], value: WireValue): void {
  let cur = root;
  path.forEach((k, i) => {
    if (i === path.length - 1) {
      cur[k] = value;
      return;
    }
    const next = Object.hasOwn(cur, k) ? cur[k] : undefined;
    if (isWireMap(next)) cur = next;
    else {
      const m = wireMap();
      cur[k] = m;
      cur = m;
    }
  });
}

/** Turns JSON-like config values (constants in a layout) into a tree. */
export function fromJson(v: unknown): WireValue {
  if (v === null || typeof v === "boolean" || typeof v === "number" || typeof v === "string")
    return v;
  if (Array.isArray(v)) return v.map(fromJson);
  if (typeof v === "object") {
    const m = wireMap();
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) m[k] = fromJson(x);
    return m;
  }
  throw new ProvaelError("config/invalid", `cannot send a ${typeof v} as a constant`);
}
