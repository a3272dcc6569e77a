/**
 * What the bridge refused, said the same way on both sides: the ERROR payload the benchmark
 * logs, the line Provael prints and the line recorded in the run directory's `refusals.jsonl`
 * carry the same words (what, the code, the message and its hint), and the printed and recorded
 * forms add where it happened (which connection, which arm).
 */
import { ProvaelError } from "../core/errors.js";

export interface Refusal {
  /** The step refused: `hello_failed`, `observation_failed`, `unknown_arm`, … */
  what: string;
  /** The error code (`config/invalid`, `run/scene-mismatch`, `policy/protocol`, …). */
  code: string;
  message: string;
  hint: string | null;
  /** The benchmark connection, numbered from 1 in the order they opened (0: none yet). */
  connection: number;
  /** The address's route (`<arm>` or `<arm>+<defense>…`); null when no arm matched. */
  route: string | null;
  /** The open episode's task and seed, when one was open. */
  task?: string;
  seed?: number;
}

/** A refusal from an error, wherever it was thrown. */
export function refusalOf(
  what: string,
  e: unknown,
  where: { connection: number; route: string | null; task?: string; seed?: number },
): Refusal {
  const code = e instanceof ProvaelError ? e.code : e instanceof Error ? e.name : "Error";
  const message = e instanceof Error ? e.message : String(e);
  const hint = e instanceof ProvaelError ? (e.hint ?? null) : null;
  return {
    what,
    code,
    message,
    hint,
    connection: where.connection,
    route: where.route,
    ...(where.task !== undefined ? { task: where.task } : {}),
    ...(where.seed !== undefined ? { seed: where.seed } : {}),
  };
}

/**
 * The words both sides read: `what: code: message (hint: …)`. The ERROR payload is exactly
 * this; the terminal line adds where (`refusalLine`).
 */
export function refusalText(r: Refusal): string {
  return `${r.what}: ${r.code}: ${r.message}${r.hint ? ` (hint: ${r.hint})` : ""}`;
}

/** The line printed on Provael's terminal: where, then the same words as the ERROR payload. */
export function refusalLine(r: Refusal): string {
  const episode = r.task !== undefined ? `, task '${r.task}' seed ${r.seed}` : "";
  return `refused on connection ${r.connection} (${r.route === null ? "no arm" : `arm ${r.route}`}${episode}): ${refusalText(r)}`;
}
