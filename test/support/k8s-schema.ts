/**
 * Checks a Kubernetes manifest against the API's own schema, as `kubectl apply` with the default
 * strict field validation would: the validators of `kubernetes-models` (generated from the
 * Kubernetes 1.27.1 OpenAPI specification) for types, required fields and enums, plus the
 * refusal of fields the schema does not define, which the OpenAPI document leaves open but the
 * API server rejects. A field is defined when the schema's validator reads it: the manifest is
 * wrapped in proxies that record every property the validator looks up, and every own property
 * never looked up (and not in a map the validator enumerates, such as labels) is unknown.
 */
import * as batchV1 from "kubernetes-models/batch/v1";
import * as coreV1 from "kubernetes-models/v1";

/** The API versions the shipped manifests use; another one is refused by name, not skipped. */
const MODELS: Record<string, Record<string, unknown>> = { "batch/v1": batchV1, v1: coreV1 };

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface Model {
  prototype: { validate(this: unknown): void };
}

/** Wraps `value` so that reads are recorded in `seen` (path → keys read, or "*" if enumerated). */
function track(value: Json, path: string, seen: Map<string, Set<string>>): Json {
  if (value === null || typeof value !== "object") return value;
  const keys = new Set<string>();
  seen.set(path, keys);
  const child = (key: string) => (Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`);
  return new Proxy(value, {
    get(target, key, receiver) {
      const v = Reflect.get(target, key, receiver);
      if (typeof key !== "string" || !Object.hasOwn(target, key)) return v;
      keys.add(key);
      return track(v as Json, child(key), seen);
    },
    has(target, key) {
      if (typeof key === "string") keys.add(key);
      return Reflect.has(target, key);
    },
    ownKeys(target) {
      keys.add("*");
      return Reflect.ownKeys(target);
    },
  });
}

/** The own properties of `value` that the validator never read, as paths. */
function unread(value: Json, path: string, seen: Map<string, Set<string>>): string[] {
  if (value === null || typeof value !== "object") return [];
  const keys = seen.get(path);
  if (keys === undefined) return [];
  const out: string[] = [];
  for (const [key, v] of Object.entries(value)) {
    const p = Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`;
    if (!Array.isArray(value) && !keys.has(key) && !keys.has("*")) out.push(p);
    else out.push(...unread(v, p, seen));
  }
  return out;
}

/** The problems the API server would report for one manifest document (empty: valid). */
export function manifestProblems(doc: Json): string[] {
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) return ["not an object"];
  const { apiVersion, kind } = doc;
  if (typeof apiVersion !== "string" || typeof kind !== "string")
    return ["apiVersion and kind are required"];
  const group = MODELS[apiVersion];
  if (group === undefined)
    return [`${apiVersion}: no schema of it is loaded here (add its models)`];
  const model = group[kind] as Model | undefined;
  if (model === undefined) return [`${kind} is not a kind of ${apiVersion}`];
  const seen = new Map<string, Set<string>>();
  const problems: string[] = [];
  try {
    model.prototype.validate.call(track(doc, "", seen));
  } catch (err) {
    problems.push((err as Error).message);
  }
  for (const p of unread(doc, "", seen))
    problems.push(`${p.slice(1)}: not a field of ${kind} (${apiVersion}) in the Kubernetes schema`);
  return problems;
}
