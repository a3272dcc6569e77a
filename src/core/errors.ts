/**
 * Every failure Provael reports is a ProvaelError with a stable code. Only `src/cli` maps codes
 * to exit codes and prints; the library never exits.
 */
export type ErrorCode =
  | "config/invalid"
  | "config/incompatible"
  | "config/incomparable"
  | "config/calibration-mismatch"
  | "config/uncalibrated"
  | "calibration/degenerate"
  | "calibration/too-few-scenes"
  | "config/scene-reuse"
  | "config/training-scenes"
  | "config/calibration-overlap"
  | "config/unknown-policy"
  | "config/unknown-suite"
  | "config/unknown-attack"
  | "config/unknown-defense"
  | "config/unknown-task"
  | "config/unknown-recipe"
  | "config/plugin"
  | "config/dataset"
  | "run/out-exists"
  | "run/plan-mismatch"
  | "run/scene-mismatch"
  | "run/journal-corrupt"
  | "run/not-found"
  | "run/incomplete"
  | "run/too-many-errors"
  | "policy/error"
  | "policy/timeout"
  | "policy/bad-action"
  | "policy/load"
  | "policy/protocol"
  | "policy/unavailable"
  | "suite/error"
  | "suite/load"
  | "attack/error"
  | "attack/budget-exhausted"
  | "defense/error"
  | "io/read"
  | "io/write"
  | "io/malformed"
  | "evidence/malformed"
  | "evidence/unsigned"
  | "evidence/bad-signature"
  | "evidence/untrusted-key"
  | "evidence/subject-mismatch"
  | "evidence/digest-mismatch"
  | "evidence/key-invalid"
  | "internal/non-finite-number"
  | "internal/unserialisable"
  | "internal/invariant";

export interface ProvaelErrorOptions {
  details?: Record<string, unknown>;
  hint?: string;
  cause?: unknown;
}

export class ProvaelError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, options: ProvaelErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ProvaelError";
    this.code = code;
    this.details = options.details ?? {};
    this.hint = options.hint;
  }

  /** Plain data, for journals and `--json` output. */
  toJSON(): { code: ErrorCode; message: string; hint?: string; details: Record<string, unknown> } {
    return {
      code: this.code,
      message: this.message,
      ...(this.hint === undefined ? {} : { hint: this.hint }),
      details: this.details,
    };
  }
}

export function isProvaelError(e: unknown): e is ProvaelError {
  return e instanceof ProvaelError;
}

/** Wraps anything thrown into a ProvaelError of the given code, keeping an existing one as is. */
export function asProvaelError(e: unknown, code: ErrorCode): ProvaelError {
  if (e instanceof ProvaelError) return e;
  const message = e instanceof Error ? e.message : String(e);
  return new ProvaelError(code, message, { cause: e });
}
