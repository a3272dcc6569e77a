import { describe, expect, it } from "vitest";
import { ProvaelError } from "../core/errors.js";
import type { ReportFile } from "../rundir/schema/index.js";
import { resolveCell, SHOWN_CELL_CHARS } from "./api.js";

/** Three episodes; two share their first 9 characters, as the viewer shows them. */
const report = {
  episodes: [
    { cell: "c0123456789abcdef0123", task: "fetch_cup", arm: "none", seed: 0 },
    { cell: "c0123456700000000000", task: "fetch_cup", arm: "patch", seed: 0 },
    { cell: "cfedcba98765432100000", task: "wipe_plate", arm: "none", seed: 1 },
  ],
} as unknown as ReportFile;

function refusal(given: string): ProvaelError {
  try {
    resolveCell(report, given);
  } catch (e) {
    if (e instanceof ProvaelError) return e;
    throw e;
  }
  throw new Error(`'${given}' was accepted`);
}

describe("resolveCell: an episode by any unique prefix of its id", () => {
  it("takes the whole id, and a unique prefix as long as the viewer shows", () => {
    expect(resolveCell(report, "c0123456789abcdef0123")).toBe("c0123456789abcdef0123");
    const shown = "cfedcba98765432100000".slice(0, SHOWN_CELL_CHARS);
    expect(resolveCell(report, shown)).toBe("cfedcba98765432100000");
    expect(resolveCell(report, "c012345678")).toBe("c0123456789abcdef0123");
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
    expect(refusal("../etc/passwd").message).toMatch(/is not a cell id/);
    expect(refusal("c0123456789abcdef01234").message).toMatch(/is not a cell id/);
  });
});
