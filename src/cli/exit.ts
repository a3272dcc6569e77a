/** The only place error codes become exit codes, and errors become text. */
import { type ErrorCode, isProvaelError } from "../core/errors.js";
import { redactText, secretsInArgv } from "../core/redact.js";

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

/** Bad input the user can fix exits 2; failures at run time exit 4. */
export function exitCodeFor(code: ErrorCode): number {
  if (code.startsWith("config/") || code.startsWith("io/") || code.startsWith("calibration/"))
    return EXIT.usage;
  if (
    code === "run/out-exists" ||
    code === "run/plan-mismatch" ||
    code === "run/not-found" ||
    code === "run/journal-corrupt"
  ) {
    return EXIT.usage;
  }
  if (code === "run/incomplete") return EXIT.incomplete;
  return EXIT.runtime;
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
