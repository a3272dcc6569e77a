/** The only place error codes become exit codes, and errors become text. */
import { type ErrorCode, isProvaelError } from "../core/errors.js";
import { redactText, secretsInArgv } from "../core/redact.js";
import type { Verdict } from "../report/verdict.js";

export const EXIT = {
  ok: 0,
  fail: 1,
  usage: 2,
  incomplete: 3,
  runtime: 4,
  /** Stopped by SIGINT or SIGTERM (128 + 2, the shell's convention for Ctrl-C). */
  interrupted: 130,
  /** Its reader closed standard output (`provael ... | head`): 128 + 13, as SIGPIPE ends a Unix tool. */
  brokenPipe: 141,
} as const;

export type Exit = (typeof EXIT)[keyof typeof EXIT];

/**
 * Every error code's exit: bad input the user can fix exits 2, an unfinished run 3, failures at
 * run time 4. Total over `ErrorCode`: a new code fails the type check until it is given its exit
 * here, instead of falling through to 4.
 */
export const EXIT_FOR: Readonly<Record<ErrorCode, Exit>> = {
  "config/invalid": EXIT.usage,
  "config/incompatible": EXIT.usage,
  "config/incomparable": EXIT.usage,
  "config/calibration-mismatch": EXIT.usage,
  "config/uncalibrated": EXIT.usage,
  "calibration/degenerate": EXIT.usage,
  "calibration/too-few-scenes": EXIT.usage,
  "config/scene-reuse": EXIT.usage,
  "config/training-scenes": EXIT.usage,
  "config/calibration-overlap": EXIT.usage,
  "config/unknown-policy": EXIT.usage,
  "config/unknown-suite": EXIT.usage,
  "config/unknown-attack": EXIT.usage,
  "config/unknown-defense": EXIT.usage,
  "config/unknown-task": EXIT.usage,
  "config/unknown-recipe": EXIT.usage,
  "config/plugin": EXIT.usage,
  "config/dataset": EXIT.usage,
  "run/out-exists": EXIT.usage,
  "run/plan-mismatch": EXIT.usage,
  "run/scene-mismatch": EXIT.runtime,
  "run/journal-corrupt": EXIT.usage,
  "run/not-found": EXIT.usage,
  "run/incomplete": EXIT.incomplete,
  "run/too-many-errors": EXIT.runtime,
  "policy/error": EXIT.runtime,
  "policy/timeout": EXIT.runtime,
  "policy/bad-action": EXIT.runtime,
  "policy/load": EXIT.runtime,
  "policy/protocol": EXIT.runtime,
  "policy/unavailable": EXIT.runtime,
  "suite/error": EXIT.runtime,
  "suite/load": EXIT.runtime,
  "attack/error": EXIT.runtime,
  "attack/budget-exhausted": EXIT.runtime,
  "defense/error": EXIT.runtime,
  "io/read": EXIT.usage,
  "io/write": EXIT.usage,
  "io/malformed": EXIT.usage,
  "evidence/malformed": EXIT.runtime,
  "evidence/unsigned": EXIT.runtime,
  "evidence/bad-signature": EXIT.runtime,
  "evidence/untrusted-key": EXIT.runtime,
  "evidence/subject-mismatch": EXIT.runtime,
  "evidence/digest-mismatch": EXIT.runtime,
  "evidence/key-invalid": EXIT.runtime,
  "internal/non-finite-number": EXIT.runtime,
  "internal/unserialisable": EXIT.runtime,
  "internal/invariant": EXIT.runtime,
};

export function exitCodeFor(code: ErrorCode): Exit {
  // A code from outside the union (a plugin's cast) is a run-time failure.
  return EXIT_FOR[code] ?? EXIT.runtime;
}

/** Error text as printed: URL credentials and the command line's secrets redacted (CI logs). */
function shown(text: string): string {
  return redactText(text, secretsInArgv(process.argv));
}

/** Prints an error without a stack trace for user errors; returns the exit code. */
export function reportError(e: unknown, json: boolean): number {
  if (isProvaelError(e)) {
    if (json) process.stdout.write(`${shown(JSON.stringify({ error: e.toJSON() }))}\n`);
    process.stderr.write(`provael: error: ${shown(e.message)}\n`);
    if (e.hint) process.stderr.write(`  hint: ${e.hint}\n`);
    const code = exitCodeFor(e.code);
    if (code === EXIT.runtime && process.env.PROVAEL_DEBUG && e.stack)
      process.stderr.write(`${shown(e.stack)}\n`);
    return code;
  }
  process.stderr.write(
    `provael: internal error: ${shown(e instanceof Error ? (e.stack ?? e.message) : String(e))}\n`,
  );
  process.stderr.write(
    "  hint: this is a bug in Provael; please report it with the command line\n",
  );
  return EXIT.runtime;
}

/** An acceptance verdict as the exit status: pass 0, fail 1, incomplete 3. */
export function verdictExitCode(v: Pick<Verdict, "verdict">): number {
  return v.verdict === "pass" ? EXIT.ok : v.verdict === "fail" ? EXIT.fail : EXIT.incomplete;
}
