/**
 * Attack families through the bridge where they can act: adaptive attacks build their model of
 * the defense in bridged episodes as in the runner's, search attacks query the upstream (in
 * process or served) within their budgets, and gradient arms behind a served upstream are N/A
 * with their reason, never an error.
 */
import { afterEach, describe, expect, it } from "vitest";
import { loadProfile } from "../../src/bridge/profile.js";
import {
  arm,
  bridge,
  closeOpen,
  journalled,
  playEpisode,
  recordingUpstream,
  records,
} from "../support/bridge.js";

afterEach(closeOpen);

describe("attack families through the bridge", () => {
  it("plays adaptive and search attacks against an in-process upstream, defended or not", async () => {
    const arms = ["none", "optimized_instruction", "optimized_instruction_adaptive"];
    for (const defenses of [undefined, { ids: ["instruction_filter"], params: {} }]) {
      const { b, out } = await bridge("stub", arms, {}, undefined, defenses ? { defenses } : {});
      expect(b.notApplicable).toEqual({});
      for (const a of arms) await playEpisode(arm(b, a), { seed: 0 });
      await journalled(b, 3);
      const result = await b.close();
      const rs = records(out);
      expect(rs.map((r) => [r.arm, r.error])).toEqual(arms.map((a) => [a, null]));
      for (const r of rs.filter((x) => x.arm !== "none")) {
        // The search spent queries on the upstream, within its recorded budget.
        expect(r.budget?.used).toBeGreaterThan(0);
        expect(r.budget?.used).toBeLessThanOrEqual(r.budget?.limit ?? 0);
      }
      expect(result.report.arms.optimized_instruction_adaptive?.errors).toBe(0);
    }
  });

  it("queries a served upstream for search arms and marks gradient arms N/A with their reason", async () => {
    const up = await recordingUpstream();
    const arms = ["none", "gradient_patch", "optimized_instruction_adaptive"];
    const { b, out } = await bridge("vla-eval", arms, {}, up.url);
    expect(b.notApplicable).toEqual({ gradient_patch: expect.stringMatching(/differentiable/) });
    for (const a of arms) await playEpisode(arm(b, a), { seed: 0 });
    await journalled(b, 3);
    const result = await b.close();
    const rs = records(out);
    expect(rs.map((r) => [r.arm, r.error, r.termination])).toEqual([
      ["none", null, "done"],
      ["gradient_patch", null, "not_applicable"],
      ["optimized_instruction_adaptive", null, "done"],
    ]);
    expect(result.report.arms.gradient_patch?.not_applicable_reason).toMatch(/differentiable/);
    expect(result.report.arms.gradient_patch?.errors).toBe(0);
    // The search's queries reached the upstream (on a connection of their own), within budget.
    const search = rs[2];
    expect(search?.budget?.used).toBeGreaterThan(0);
    expect(search?.budget?.used).toBeLessThanOrEqual(search?.budget?.limit ?? 0);
    expect(up.observations.length).toBe(3 * 2 + (search?.budget?.used ?? 0));
    // Queries are not steps: the played steps all reached the model, no more.
    expect(search?.bridge?.steps_used).toBe(2);
  });

  it("marks camera arms N/A under a profile that names no camera ('*'), saying so", async () => {
    const up = await recordingUpstream();
    const { b } = await bridge("vla-eval", ["none", "patch"], {}, up.url, {
      profile: loadProfile("mikasa"),
    });
    // The profile's '*' is never taken for a camera's name (a patch would be drawn into none).
    expect(b.notApplicable).toEqual({
      patch: expect.stringMatching(/profile 'mikasa' names none \(images\.keys: \['\*'\]/),
    });
  });

  it("marks the fitted patch attacks N/A behind a benchmark it cannot open, before playing", async () => {
    // They fit on scenes of the suite rendered outside the episodes; LIBERO is only messages here.
    const up = await recordingUpstream();
    const arms = ["none", "universal_patch", "trigger_scan", "random_scan_search"];
    const { b, out } = await bridge("vla-eval", arms, {}, up.url);
    const why = expect.stringMatching(/fitScenes/);
    expect(b.notApplicable).toEqual({
      universal_patch: why,
      trigger_scan: why,
      random_scan_search: why,
    });
    for (const a of arms) await playEpisode(arm(b, a), { seed: 0 });
    await journalled(b, 4);
    const result = await b.close();
    expect(records(out).map((r) => [r.arm, r.error, r.termination])).toEqual([
      ["none", null, "done"],
      ["universal_patch", null, "not_applicable"],
      ["trigger_scan", null, "not_applicable"],
      ["random_scan_search", null, "not_applicable"],
    ]);
    expect(result.report.arms.universal_patch?.not_applicable_reason).toMatch(/render scenes/);
  });
});
