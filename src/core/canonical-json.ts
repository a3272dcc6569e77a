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
  return serialise(value, "$");
}

function serialise(value: unknown, path: string): string {
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
      if (Array.isArray(value)) {
        return `[${value.map((v, i) => serialise(v === undefined ? null : v, `${path}[${i}]`)).join(",")}]`;
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
      return `{${keys.map((k) => `${JSON.stringify(k)}:${serialise(obj[k], `${path}.${k}`)}`).join(",")}}`;
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
