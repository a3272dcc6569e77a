import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../test/support/tmp.js";
import { writeOpenPage } from "../view/open-page.js";
import { writeSite } from "./site.js";

const link = (dir: string) =>
  readFileSync(join(dir, "index.html"), "utf8").match(/<a id="viewer-link"[^>]*>/)?.[0];

describe("the playground site", () => {
  it("ships the viewer's run-directory page under viewer/ and shows its link only then", () => {
    const withViewer = tempDir();
    const files = writeSite(withViewer, writeOpenPage);
    expect(files).toEqual(expect.arrayContaining(["viewer/open.html", "viewer/open.js"]));
    expect(link(withViewer)).toBe('<a id="viewer-link" href="viewer/open.html">');

    const alone = tempDir();
    writeSite(alone);
    expect(existsSync(join(alone, "viewer"))).toBe(false);
    expect(link(alone)).toContain("hidden");
  });

  it("refuses a folder that holds something other than a site", () => {
    const dir = tempDir();
    writeSite(dir);
    expect(() => writeSite(dir)).not.toThrow();
    const other = tempDir();
    writeOpenPage(other);
    expect(() => writeSite(other)).toThrow(/holds no playground site/);
  });
});
