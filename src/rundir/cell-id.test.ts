import { describe, expect, it } from "vitest";
import { ProvaelError } from "../core/errors.js";
import { resolveCell } from "./cell-id.js";
import { SHOWN_CELL_CHARS } from "./names.js";

/** Three episodes; two share their first 9 characters, as the viewer shows them. */
const episodes = [
  { cell: "c0123456789abcdef0123", task: "fetch_cup", arm: "none", seed: 0 },
  { cell: "c0123456700000000000", task: "fetch_cup", arm: "patch", seed: 0 },
  { cell: "cfedcba98765432100000", task: "wipe_plate", arm: "none", seed: 1 },
];

function refusal(given: string): ProvaelError {
  try {
    resolveCell(episodes, given);
  } catch (e) {
    if (e instanceof ProvaelError) return e;
    throw e;
  }
  throw new Error(`'${given}' was accepted`);
}

describe("resolveCell: an episode by any unique prefix of its id", () => {
  it("takes the whole id, and a unique prefix as long as the viewer shows", () => {
    expect(resolveCell(episodes, "c0123456789abcdef0123")).toBe("c0123456789abcdef0123");
    const shown = "cfedcba98765432100000".slice(0, SHOWN_CELL_CHARS);
    expect(resolveCell(episodes, shown)).toBe("cfedcba98765432100000");
    expect(resolveCell(episodes, "c012345678")).toBe("c0123456789abcdef0123");
  });

  it("refuses an ambiguous prefix, listing the candidates", () => {
    const e = refusal("c01234567");
    expect(e.code).toBe("config/invalid");
    expect(e.message).toContain("names 2 episodes");
    expect(e.message).toContain("c0123456789abcdef0123 (fetch_cup, none, seed 0)");
    expect(e.message).toContain("c0123456700000000000 (fetch_cup, patch, seed 0)");
    expect(e.hint).toMatch(/more of the id/);
  });

  it("refuses a prefix shorter than the viewer shows, one that names nothing, and a non-id", () => {
    expect(refusal("cfedcba9").message).toMatch(/shorter than the 9 characters/);
    expect(refusal("c99999999").code).toBe("run/not-found");
    expect(refusal("c99999999").message).not.toMatch(/did you mean/);
    expect(refusal("../etc/passwd").message).toMatch(/is not a cell id/);
    expect(refusal("c0123456789abcdef01234").message).toMatch(/is not a cell id/);
  });

  it("refuses an id that names nothing with the closest ids (a mistyped digit)", () => {
    const e = refusal("cfedcba88");
    expect(e.code).toBe("run/not-found");
    expect(e.message).toMatch(
      /no episode cfedcba88 \(did you mean cfedcba98765432100000 \(wipe_plate, none, seed 1\)\?\)/,
    );
    expect(e.details).toMatchObject({ closest: ["cfedcba98765432100000"] });
    expect(e.hint).toMatch(/provael view/);
  });
});
