/** Strict parsers for flag values: a bad value is a clear error naming the flag. */
import { ProvaelError } from "../core/errors.js";

export function integer(flag: string, { min }: { min: number }) {
  return (raw: string): number => {
    const v = Number(raw);
    if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(v) || v < min) {
      throw new ProvaelError(
        "config/invalid",
        `${flag} must be an integer ≥ ${min}, got '${raw}'`,
        {
          details: { flag, value: raw },
          hint: `pass ${flag} ${Math.max(min, 1)} or more`,
        },
      );
    }
    return v;
  };
}

export function list(raw: string): string[] {
  return raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

export function choice<T extends string>(flag: string, values: readonly T[]) {
  return (raw: string): T => {
    if (!(values as readonly string[]).includes(raw)) {
      throw new ProvaelError(
        "config/invalid",
        `${flag} must be one of ${values.join(", ")}, got '${raw}'`,
        {
          details: { flag, value: raw },
        },
      );
    }
    return raw as T;
  };
}

/** `a:b` -> [a, b): a half-open scene range, for the flag named `flag`. */
export function sceneRange(flag: string) {
  return (raw: string): [number, number] => {
    const m = /^(\d+):(\d+)$/.exec(raw.trim());
    const from = Number(m?.[1]);
    const to = Number(m?.[2]);
    if (!m || !(to > from)) {
      throw new ProvaelError(
        "config/invalid",
        `${flag} must be FROM:TO with TO > FROM, got '${raw}'`,
        { hint: `e.g. ${flag} 20:40 (the first scene, then one past the last)` },
      );
    }
    return [from, to];
  };
}

export type ParamValue = string | number | boolean;

/** A flag value: true/false, a number, a fraction like 16/255, or else the string itself. */
export function typedValue(value: string): ParamValue {
  if (value === "true") return true;
  if (value === "false") return false;
  const fraction = /^(-?[0-9.]+(?:e-?[0-9]+)?)\/([0-9.]+(?:e-?[0-9]+)?)$/i.exec(value);
  if (fraction) {
    const q = Number(fraction[1]) / Number(fraction[2]);
    if (Number.isFinite(q)) return q;
  }
  return value !== "" && Number.isFinite(Number(value)) ? Number(value) : value;
}

/** Repeatable `--policy-option key=value`; numbers and booleans are typed. */
export function policyOption(
  raw: string,
  previous: Record<string, ParamValue>,
): Record<string, ParamValue> {
  const at = raw.indexOf("=");
  if (at <= 0) {
    throw new ProvaelError("config/invalid", `--policy-option needs key=value, got '${raw}'`, {
      hint: "e.g. --policy-option replan=2",
    });
  }
  return { ...previous, [raw.slice(0, at)]: typedValue(raw.slice(at + 1)) };
}

/** A comma-separated list; repeatable (each occurrence adds to the list). */
export function commaList(raw: string, previous: string[] = []): string[] {
  return [...previous, ...list(raw)];
}

/**
 * Repeatable `--attack-param arm.key=value` and `--defense-param defense.key=value`, parsed one
 * way for every command: true/false, numbers and fractions (`32/255`) typed by `typedValue`, a
 * value opening with `[` or `{` read as JSON, anything else a string.
 */
export function keyedParam(flag: string, what: "arm" | "defense", example: string) {
  return (
    raw: string,
    previous: Record<string, Record<string, unknown>> = {},
  ): Record<string, Record<string, unknown>> => {
    const m = /^([a-z0-9_.-]+)\.([A-Za-z0-9_]+)=(.*)$/.exec(raw);
    if (!m) {
      throw new ProvaelError("config/invalid", `${flag} needs ${what}.key=value, got '${raw}'`, {
        details: { flag, value: raw },
        hint: `e.g. ${flag} ${example}`,
      });
    }
    const [, id, key, value] = m as unknown as [string, string, string, string];
    let parsed: unknown = typedValue(value);
    if (/^[[{]/.test(value)) {
      try {
        parsed = JSON.parse(value);
      } catch {
        throw new ProvaelError("config/invalid", `${flag} ${id}.${key}: not JSON: ${value}`, {
          details: { flag, value: raw },
        });
      }
    }
    return { ...previous, [id]: { ...(previous[id] ?? {}), [key]: parsed } };
  };
}

/**
 * Keyed parameters checked before anything runs: each names a plugin of the run (an arm, a
 * defense) and `check` accepts its set. Returned as given, keys sorted (not with defaults filled
 * in), so a plan written without them is unchanged.
 */
export function checkKeyedParams(
  flag: string,
  what: "arm" | "defense",
  given: Record<string, Record<string, unknown>>,
  ids: readonly string[],
  check: (id: string, params: Record<string, unknown>) => void,
): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const id of Object.keys(given).sort()) {
    if (!ids.includes(id)) {
      throw new ProvaelError(
        "config/invalid",
        `${flag} names '${id}', which is not ${what === "arm" ? "an arm" : "a defense"} of this run`,
        {
          details: { flag, ids },
          hint: `add it with ${what === "arm" ? "--attacks" : "--defenses"}, or fix its name`,
        },
      );
    }
    const params = given[id] as Record<string, unknown>;
    check(id, params);
    out[id] = Object.fromEntries(
      Object.keys(params)
        .sort()
        .map((k) => [k, params[k]]),
    );
  }
  return out;
}
