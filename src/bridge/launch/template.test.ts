import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Report } from "../../report/build.js";
import { profileFor, readBenchmarkConfig } from "./config.js";
import { missingCells, ranges } from "./run.js";
import { DEFAULT_BENCHMARK_COMMAND, expandCommand } from "./template.js";

const values = { url: "ws://127.0.0.1:9/arms/none", arm: "none", shard: 0, num_shards: 1 };

describe("benchmark command template", () => {
  it("fills the placeholders, quoting what the shell would split", () => {
    expect(expandCommand(DEFAULT_BENCHMARK_COMMAND, { ...values, config: "my runs/c.yaml" })).toBe(
      "vla-eval run --config 'my runs/c.yaml' --server-url ws://127.0.0.1:9/arms/none --yes",
    );
    expect(expandCommand("b --url {url} --arm {arm} --k {shard}/{num_shards}", values)).toBe(
      "b --url ws://127.0.0.1:9/arms/none --arm none --k 0/1",
    );
  });

  it("adds vla-eval's shard flags when the template places no shard", () => {
    expect(
      expandCommand(DEFAULT_BENCHMARK_COMMAND, {
        ...values,
        config: "c.yaml",
        shard: 1,
        num_shards: 4,
      }),
    ).toMatch(/--yes --shard-id 1 --num-shards 4$/);
  });

  it("refuses an unknown placeholder, a template without {url}, {config} without a file", () => {
    expect(() => expandCommand("x {url} {cfg}", values)).toThrow(/unknown placeholder \{cfg\}/);
    expect(() => expandCommand("x --config {config}", { ...values, config: "c" })).toThrow(
      /needs \{url\}/,
    );
    expect(() => expandCommand(DEFAULT_BENCHMARK_COMMAND, values)).toThrow(/no --benchmark file/);
  });
});

describe("vla-eval config", () => {
  it("picks the profile from the benchmarks the config names", () => {
    const dir = mkdtempSync(join(tmpdir(), "provael-config-"));
    const path = join(dir, "spatial.yaml");
    writeFileSync(
      path,
      'benchmarks:\n  - benchmark: "vla_eval.benchmarks.libero.benchmark:LIBEROBenchmark"\n    episodes_per_task: 50\n',
    );
    const c = readBenchmarkConfig(path);
    expect(c.episodesPerTask).toEqual([50]);
    expect(profileFor(undefined, c).id).toBe("libero");
    writeFileSync(path, "benchmarks:\n  - benchmark: my.pkg:Mine\n");
    expect(() => profileFor(undefined, readBenchmarkConfig(path))).toThrow(/my.pkg:Mine/);
    writeFileSync(path, "server: {}\n");
    expect(() => readBenchmarkConfig(path)).toThrow(/no benchmarks\[\]\.benchmark/);
  });
});

describe("missing cells", () => {
  it("lists, per address and task, the episodes some other address finished", () => {
    const ep = (arm: string, task: string, seed: number, error: unknown = null) => ({
      arm,
      task,
      seed,
      error,
    });
    const report = {
      episodes: [
        ep("none", "t", 0),
        ep("none", "t", 1),
        ep("none", "t", 2),
        ep("freeze", "t", 1, {}),
      ],
    } as unknown as Report;
    const processes = [
      { route: "freeze", shard: 0, code: 1 },
      { route: "freeze", shard: 1, code: 0 },
    ] as unknown as Parameters<typeof missingCells>[3];
    expect(missingCells(report, ["none", "freeze"], 1, processes)).toEqual([
      { route: "freeze", task: "t", episodes: [0, 1, 2], shards: [0] },
    ]);
    expect(ranges([0, 1, 2, 5, 7, 8])).toBe("0-2, 5, 7-8");
  });
});
