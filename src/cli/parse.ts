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
