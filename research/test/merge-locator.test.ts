/**
 * research/merge-locator.mjs joins two trainings' stages; the join itself is tested beside
 * src/offline/merge-locator.ts. Here: what the script says when it must refuse, the way the CLI
 * says it (the reason, then what to do), with exit 2 and nothing written.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../test/support/tmp.js";

const ROOT = join(import.meta.dirname, "..", "..");
const merge = (...args: string[]) =>
  spawnSync(process.execPath, [join(ROOT, "research", "merge-locator.mjs"), ...args], {
    encoding: "utf8",
  });

describe("research/merge-locator.mjs", () => {
  it("refuses two models of different configurations with the reason and a hint", () => {
    const out = join(tempDir(), "joined");
    const r = merge(
      join(ROOT, "assets", "tiny-vla"),
      join(ROOT, "assets", "tiny-vla-backdoored"),
      out,
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^merge-locator: the two models' configurations differ\n {2}hint: /);
    expect(existsSync(out)).toBe(false);
  });

  it("refuses a directory without weights and says what it expected", () => {
    const dir = tempDir();
    const r = merge(dir, join(ROOT, "assets", "tiny-vla"), join(dir, "joined"));
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`no tiny-vla weights in ${dir}`);
    expect(r.stderr).toMatch(/hint: expected manifest\.json and weights\.bin/);
  });

  it("prints its usage without three directories", () => {
    const r = merge("only-one");
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      "usage: node research/merge-locator.mjs ACTOR_DIR LOCATOR_DIR OUT_DIR",
    );
  });
});
