import { ProvaelError } from "./errors.js";

/**
 * RFC 8785 (JSON Canonicalization Scheme) serialisation.
 *
 * Keys are sorted by UTF-16 code units, numbers use the ECMAScript shortest round-trip form
 * (which is what RFC 8785 §3.2.2.3 prescribes), and no whitespace is emitted. Non-finite numbers
 * and `undefined` inside arrays are refused rather than silently turned into `null`, because a
 * report that changes meaning on serialisation is worse than one that fails loudly.
 *
 * @example canonicalJson({ b: 1, a: [true, null] }) === '{"a":[true,null],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  return serialise(value, "$", 0);
}

/**
 * How deep JSON Provael reads or writes may nest (objects and arrays within each other). A
 * report nests about 8 deep; a loose field (`run.policy_options`, `run.attack_params`) holds
 * whatever a user passed, so readers refuse anything deeper than this before it reaches a
 * recursive consumer, and `canonicalJson` refuses it rather than overflow the stack.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The dotted path of the first place `value` nests deeper than `limit` levels, or null. Walks
 * iteratively, so any depth JSON.parse accepts is measured without recursion.
 *
 * @example tooDeep({ a: [[1]] }, 2) === "a.0"
 */
export function tooDeep(value: unknown, limit = MAX_JSON_DEPTH): string | null {
  const stack: { v: unknown; depth: number; path: string }[] = [{ v: value, depth: 0, path: "" }];
  while (stack.length > 0) {
    const { v, depth, path } = stack.pop() as { v: unknown; depth: number; path: string };
    if (v === null || typeof v !== "object") continue;
    if (depth >= limit) return path === "" ? "(the whole value)" : path;
    const entries: [string, unknown][] = Array.isArray(v)
      ? v.map((x, i) => [String(i), x])
      : Object.entries(v as Record<string, unknown>);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, x] = entries[i] as [string, unknown];
      if (x !== null && typeof x === "object")
        stack.push({ v: x, depth: depth + 1, path: path === "" ? k : `${path}.${k}` });
    }
  }
  return null;
}

function serialise(value: unknown, path: string, depth: number): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      if (!Number.isFinite(value)) {
        throw new ProvaelError(
          "internal/non-finite-number",
          `cannot serialise ${value} at ${path}`,
          {
            details: { path },
            hint: "store a non-finite statistic as null",
          },
        );
      }
      // JSON.stringify on a finite number gives the ECMAScript shortest form, as RFC 8785 asks.
      return Object.is(value, -0) ? "0" : JSON.stringify(value);
    case "string":
      return JSON.stringify(value);
    case "object": {
      if (depth >= MAX_JSON_DEPTH) {
        throw new ProvaelError(
          "io/malformed",
          `a value nests deeper than ${MAX_JSON_DEPTH} levels at ${path}`,
          {
            details: { path, max: MAX_JSON_DEPTH },
            hint: "no file Provael writes nests this deep: the input was edited or written by another tool",
          },
        );
      }
      if (Array.isArray(value)) {
        return `[${value.map((v, i) => serialise(v === undefined ? null : v, `${path}[${i}]`, depth + 1)).join(",")}]`;
      }
      if (ArrayBuffer.isView(value)) {
        throw new ProvaelError("internal/unserialisable", `typed array at ${path} is not JSON`, {
          details: { path },
          hint: "convert typed arrays with Array.from before serialising",
        });
      }
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj)
        .filter((k) => obj[k] !== undefined)
        .sort(compareUtf16);
      return `{${keys.map((k) => `${JSON.stringify(k)}:${serialise(obj[k], `${path}.${k}`, depth + 1)}`).join(",")}}`;
    }
    default:
      throw new ProvaelError(
        "internal/unserialisable",
        `cannot serialise a ${typeof value} at ${path}`,
        {
          details: { path },
        },
      );
  }
}

function compareUtf16(a: string, b: string): number {
  // Default JS string comparison is by UTF-16 code units, exactly what RFC 8785 §3.2.3 requires.
  return a < b ? -1 : a > b ? 1 : 0;
}
