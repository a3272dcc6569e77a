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
