/**
 * The golden report.json of the stub quick run (`provael attack --policy stub --suite stub`):
 * the built CLI must write exactly these bytes. A change meant to alter reports regenerates it
 * in the same commit (`npm run build && node test/golden/report/generate.mjs`); a change not
 * meant to alter them must leave this test green.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/tmp.js";

const golden = join(import.meta.dirname, "..", "golden", "report");

describe("golden report.json of the stub quick run", () => {
  it("the built CLI writes the committed bytes", () => {
    const fresh = join(tempDir(), "report.json");
    const r = spawnSync(process.execPath, [join(golden, "generate.mjs"), fresh], {
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    const want = readFileSync(join(golden, "stub-quick.report.json"), "utf8");
    const got = readFileSync(fresh, "utf8");
    if (got !== want) {
      const a = JSON.parse(want);
      const b = JSON.parse(got);
      const changed = Object.keys({ ...a, ...b }).filter(
        (k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]),
      );
      expect.fail(
        `report.json of the stub quick run changed (top-level fields: ${changed.join(", ")}); if that is intended, run \`npm run build && node test/golden/report/generate.mjs\` and commit the file`,
      );
    }
  });
});
