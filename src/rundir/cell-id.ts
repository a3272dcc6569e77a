/**
 * An episode named by its cell id or any unique prefix of it: the one rule every place that
 * takes an episode id follows (`provael video --cell`, the viewer's episode address and API).
 * Browser-safe: the viewer's page resolves the ids of runs it reads itself.
 */
import { distance } from "fastest-levenshtein";
import { ProvaelError } from "../core/errors.js";
import { SHOWN_CELL_CHARS } from "./names.js";

/** What a refusal says of an episode. */
export interface NamedEpisode {
  cell: string;
  task: string;
  arm: string;
  seed: number;
}

/** How many candidates an ambiguous prefix's refusal lists. */
const SHOWN_CANDIDATES = 8;

const describe = (e: NamedEpisode) => `${e.cell} (${e.task}, ${e.arm}, seed ${e.seed})`;

/**
 * The episode's full cell id from the id or any unique prefix of it at least as long as the
 * viewer shows. Refused: a non-id, a shorter prefix, one that names several episodes (the
 * candidates listed, with their task, arm and seed) and one that names none (the closest ids
 * offered: a mistyped digit is the usual slip).
 */
export function resolveCell(episodes: readonly NamedEpisode[], given: string): string {
  if (!/^c[0-9a-f]*$/.test(given) || given.length > 21) {
    throw new ProvaelError("config/invalid", `'${given.slice(0, 40)}' is not a cell id`, {
      hint: `cell ids are 'c' and 20 hex digits; any unique prefix of ${SHOWN_CELL_CHARS} characters or more is taken`,
    });
  }
  if (given.length < SHOWN_CELL_CHARS) {
    throw new ProvaelError(
      "config/invalid",
      `cell id prefix '${given}' is shorter than the ${SHOWN_CELL_CHARS} characters the viewer shows`,
      { hint: "copy the id from `provael view`'s episode table, or the whole id from report.json" },
    );
  }
  const matches = episodes.filter((e) => e.cell.startsWith(given));
  if (matches.length === 1) return (matches[0] as NamedEpisode).cell;
  if (matches.length === 0) {
    // Compared at the length given (a 9-character prefix with 9-character ones), two edits at
    // most: a mistyped or a dropped digit, not an unrelated id.
    const near = episodes
      .map((e) => ({ e, d: distance(given, e.cell.slice(0, given.length)) }))
      .filter(({ d }) => d <= 2)
      .sort((x, y) => x.d - y.d || (x.e.cell < y.e.cell ? -1 : 1))
      .slice(0, 3)
      .map(({ e }) => e);
    throw new ProvaelError(
      "run/not-found",
      `the run has no episode ${given}${near.length > 0 ? ` (did you mean ${near.map(describe).join(", ")}?)` : ""}`,
      {
        details: { cell: given, closest: near.map((e) => e.cell) },
        hint: "open the run in `provael view` and copy an id from its episode table",
      },
    );
  }
  const listed = matches.slice(0, SHOWN_CANDIDATES).map(describe).join(", ");
  const more =
    matches.length > SHOWN_CANDIDATES ? ` and ${matches.length - SHOWN_CANDIDATES} more` : "";
  throw new ProvaelError(
    "config/invalid",
    `cell id prefix '${given}' names ${matches.length} episodes: ${listed}${more}`,
    { details: { candidates: matches.map((e) => e.cell) }, hint: "give more of the id" },
  );
}
