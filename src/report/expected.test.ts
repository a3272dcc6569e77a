import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../test/support/tmp.js";
import { PACKAGE_ROOT } from "../core/package-root.js";
import type { Report } from "./build.js";
import {
  completeness,
  expectationFromVlaEvalConfig,
  parseExpect,
  renderCompletenessMarkdown,
} from "./expected.js";

/** Only what completeness reads: the arms and the episodes' (task, arm, seed, repeat). */
function report(arms: string[], cells: [string, string, number][]): Report {
  return {
    run: { arms, tasks: [...new Set(cells.map((c) => c[0]))] },
    episodes: cells.map(([task, arm, seed]) => ({ task, arm, seed, repeat: 0 })),
  } as unknown as Report;
}

function config(text: string): string {
  const path = join(tempDir("provael-expect-"), "eval.yaml");
  writeFileSync(path, text);
  return path;
}

describe("expected cells", () => {
  it("parses TASKSxEPISODES and refuses anything else", () => {
    expect(parseExpect("10x50").groups).toEqual([
      { label: "--expect 10x50", tasks: 10, episodes: 50 },
    ]);
    expect(parseExpect("2×3").groups[0]).toMatchObject({ tasks: 2, episodes: 3 });
    for (const bad of ["10", "0x5", "x5", "10x", "ten x 5"])
      expect(() => parseExpect(bad)).toThrow(/--expect must be TASKSxEPISODES/);
  });

  it("a complete run is complete", () => {
    const r = report(
      ["none", "roleplay"],
      ["none", "roleplay"].flatMap((arm) =>
        ["s/a", "s/b"].flatMap((t) => [0, 1].map((s) => [t, arm, s] as [string, string, number])),
      ),
    );
    const c = completeness(r, parseExpect("2x2"));
    expect(c.complete).toBe(true);
    expect(c.arms.none).toEqual({ expected: 4, present: 4, missing: 0 });
    expect(c.missing_seeds).toEqual({});
  });

  it("missing seeds, a task that never ran and stray episodes are all counted", () => {
    const r = report(
      ["none", "roleplay"],
      [
        ["s/a", "none", 0],
        ["s/a", "none", 1],
        ["s/a", "roleplay", 0],
        ["s/b", "none", 0],
        ["s/b", "none", 1],
        ["s/b", "roleplay", 0],
        ["s/b", "roleplay", 1],
        ["s/a", "none", 7],
      ],
    );
    const c = completeness(r, parseExpect("3x2"));
    expect(c.complete).toBe(false);
    expect(c.arms).toEqual({
      none: { expected: 6, present: 4, missing: 2 },
      roleplay: { expected: 6, present: 3, missing: 3 },
    });
    expect(c.missing_seeds).toEqual({ "s/a": { roleplay: [1] } });
    expect(c.unseen_tasks).toBe(1);
    expect(c.unexpected_episodes).toBe(1);
    const md = renderCompletenessMarkdown(c);
    expect(md).toContain("**Incomplete:**");
    expect(md).toContain("| roleplay | 6 | 3 | 3 |");
    expect(md).toContain("1 expected task(s) never ran");
    expect(md).toContain("s/a: missing seeds roleplay: 1");
  });

  it("an arm with no episode at all is expected in full", () => {
    const r = report(["none", "freeze"], [["s/a", "none", 0]]);
    expect(completeness(r, parseExpect("1x1")).arms.freeze).toEqual({
      expected: 1,
      present: 0,
      missing: 1,
    });
  });

  it("reads a LIBERO config: the suite's 10 tasks × episodes_per_task", () => {
    const path = config(`
server: { url: "ws://localhost:8000" }
benchmarks:
  - benchmark: "vla_eval.benchmarks.libero.benchmark:LIBEROBenchmark"
    subname: libero_spatial
    episodes_per_task: 50
    params: { suite: libero_spatial, seed: 7 }
`);
    const e = expectationFromVlaEvalConfig(path);
    expect(e.groups).toEqual([
      { label: "benchmarks.0 (LIBEROBenchmark libero_spatial)", tasks: 10, episodes: 50 },
    ]);
    const capped = config(`
benchmarks:
  - benchmark: "provael_libero:ProvaelLIBEROBenchmark"
    episodes_per_task: 3
    max_tasks: 2
    params: { suite: libero_90 }
`);
    expect(expectationFromVlaEvalConfig(capped).groups[0]).toMatchObject({ tasks: 2, episodes: 3 });
  });

  it("reads a SimplerEnv config: one named task per entry", () => {
    const path = config(`
benchmarks:
  - benchmark: "vla_eval.benchmarks.simpler.benchmark:SimplerEnvBenchmark"
    episodes_per_task: 24
    params: { task_name: widowx_stack_cube }
  - benchmark: "vla_eval.benchmarks.simpler.benchmark:SimplerEnvBenchmark"
    episodes_per_task: 24
    params: { task_name: widowx_carrot_on_plate }
`);
    const e = expectationFromVlaEvalConfig(path);
    expect(e.groups.map((g) => [g.tasks, g.episodes, g.names])).toEqual([
      [1, 24, ["widowx_stack_cube"]],
      [1, 24, ["widowx_carrot_on_plate"]],
    ]);
    const r = report(
      ["none"],
      Array.from(
        { length: 24 },
        (_, s) => ["widowx_stack_cube", "none", s] as [string, string, number],
      ),
    );
    const c = completeness(r, e);
    expect(c.arms.none).toEqual({ expected: 48, present: 24, missing: 24 });
    expect(c.unseen_task_names).toEqual(["widowx_carrot_on_plate"]);
  });

  it("the shipped example config expects LIBERO-Spatial's 10 tasks × 50 episodes", () => {
    const path = join(PACKAGE_ROOT, "examples", "vla-eval", "provael_libero_spatial.yaml");
    expect(expectationFromVlaEvalConfig(path).groups[0]).toMatchObject({ tasks: 10, episodes: 50 });
  });

  it("refuses a config whose task count it cannot know", () => {
    const path = config(`
benchmarks:
  - benchmark: "vla_eval.benchmarks.calvin.benchmark:CALVINBenchmark"
    episodes_per_task: 5
`);
    expect(() => expectationFromVlaEvalConfig(path)).toThrow(/cannot tell how many tasks/);
    expect(() => expectationFromVlaEvalConfig(config("server: {}\n"))).toThrow(/benchmarks/);
  });
});
