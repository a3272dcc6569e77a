/**
 * `provael bridge --compare-defenses`: every arm is served twice, undefended at /arms/<arm> and
 * defended at /arms/<arm>+<defense>…, so one vla-eval run per address plays each cell both ways
 * and the report pairs them as `provael attack --compare-defenses` does.
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  arm,
  bridge,
  closeOpen,
  journalled,
  Peer,
  playEpisode,
  records,
} from "../support/bridge.js";
import { tempDir } from "../support/tmp.js";

afterEach(closeOpen);

describe("provael bridge --compare-defenses", () => {
  it("serves each arm undefended and defended and reports the paired mitigation", async () => {
    const defenses = { ids: ["instruction_filter"], params: {}, compare: true };
    const out = join(tempDir(), "run");
    const { b } = await bridge("stub", ["none", "roleplay"], {}, undefined, { defenses, out });
    expect(Object.keys(b.armUrls).sort()).toEqual([
      "none",
      "none+instruction_filter",
      "roleplay",
      "roleplay+instruction_filter",
    ]);
    expect(b.armUrls["roleplay+instruction_filter"]).toMatch(
      /\/arms\/roleplay\+instruction_filter$/,
    );
    for (const route of Object.keys(b.armUrls)) await playEpisode(arm(b, route), { seed: 0 });
    await journalled(b, 4);
    const result = await b.close();
    const rs = records(out);
    expect(rs.map((r) => [r.arm, r.repeat, r.defenses ?? null, r.error])).toEqual([
      ["none", 0, null, null],
      ["none", 0, ["instruction_filter"], null],
      ["roleplay", 0, null, null],
      ["roleplay", 0, ["instruction_filter"], null],
    ]);
    // Twins share the scene and the seed, not the cell.
    expect(new Set(rs.map((r) => r.cell)).size).toBe(4);
    expect(result.report.run.defenses).toMatchObject({
      ids: ["instruction_filter"],
      compare: true,
    });
    expect(result.report.mitigation?.defenses).toEqual(["instruction_filter"]);
    expect(Object.keys(result.report.mitigation?.arms ?? {})).toContain("roleplay");
  });

  it("refuses an unknown address and names the ones there are", async () => {
    const defenses = { ids: ["instruction_filter"], params: {}, compare: true };
    const { b } = await bridge("stub", ["none"], {}, undefined, { defenses });
    const r = await fetch(`${b.url.replace("ws:", "http:")}/arms`);
    expect(Object.keys((await r.json()).arms)).toEqual(["none", "none+instruction_filter"]);
    await expect(Peer.open(`${b.url}/arms/none+image_purifier`)).rejects.toThrow(/404/);
  });
});
