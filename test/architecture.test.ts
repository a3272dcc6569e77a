/** Layering and determinism rules that hold for the whole of src/. */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "..", "src");

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory()
      ? files(p)
      : p.endsWith(".ts") && !p.endsWith(".test.ts")
        ? [p]
        : [];
  });
}

/** Which layers each layer may import (ARCHITECTURE.md §3). */
const ALLOWED: Record<string, string[]> = {
  core: ["core"],
  rundir: ["core", "stats", "judges", "rundir"],
  stats: ["core", "stats"],
  judges: ["core", "stats", "judges"],
  suites: ["core", "stats", "judges", "suites"],
  policies: ["core", "stats", "policies", "suites"],
  attacks: ["core", "stats", "attacks", "suites", "policies", "defenses"],
  defenses: ["core", "stats", "defenses", "judges"],
  // The episode kernel (begin a cell, build its context, decide its predicates, play it): under
  // every driver of an episode (runner, bridge, offline study, viewer), over the plugins.
  kernel: ["core", "stats", "kernel", "suites", "policies", "attacks", "judges", "defenses"],
  offline: ["core", "stats", "offline", "suites", "policies", "attacks", "kernel"],
  config: ["core", "stats", "config", "attacks", "suites", "policies", "judges", "defenses"],
  runner: [
    "rundir",
    "core",
    "stats",
    "runner",
    "kernel",
    "suites",
    "policies",
    "attacks",
    "judges",
    "report",
    "config",
    "defenses",
  ],
  // `runner` and `bridge` use `report`, never the reverse (plan and episode types live in core).
  report: [
    "rundir",
    "core",
    "stats",
    "report",
    "attacks",
    "judges",
    "config",
    "suites",
    "policies",
    "defenses",
  ],
  // The runner's peer, not its client: both drive the episode kernel and end a run in report.
  bridge: [
    "rundir",
    "core",
    "stats",
    "bridge",
    "kernel",
    "suites",
    "policies",
    "attacks",
    "judges",
    "report",
    "config",
    "defenses",
  ],
  evidence: ["rundir", "core", "stats", "evidence", "report", "runner", "config"],
  view: [
    "rundir",
    "core",
    "stats",
    "view",
    "kernel",
    "report",
    "runner",
    "suites",
    "policies",
    "attacks",
    "judges",
    "config",
    "defenses",
  ],
  cli: [
    "rundir",
    "core",
    "stats",
    "cli",
    "kernel",
    "bridge",
    "runner",
    "report",
    "evidence",
    "config",
    "suites",
    "policies",
    "attacks",
    "judges",
    "offline",
    "defenses",
    "view",
  ],
};

describe("architecture", () => {
  const all = files(SRC);

  it("imports follow the layer rules and nothing imports cli", () => {
    const violations: string[] = [];
    for (const file of all) {
      const rel = relative(SRC, file);
      const layer = rel.includes("/") ? (rel.split("/")[0] as string) : "root";
      if (layer === "root") continue;
      const allowed = ALLOWED[layer];
      expect(allowed, `unknown layer ${layer}`).toBeDefined();
      for (const m of readFileSync(file, "utf8").matchAll(/from\s+"(\.{1,2}\/[^"]+)"/g)) {
        const target = relative(SRC, join(file, "..", m[1] as string));
        const targetLayer = target.split("/")[0] as string;
        if (!(allowed as string[]).includes(targetLayer))
          violations.push(`${rel} imports ${target}`);
      }
    }
    expect(violations).toEqual([]);
  });

  /** Relative imports of a file, resolved to src/ paths; type-only ones flagged. */
  const imports = (file: string) =>
    [
      ...readFileSync(file, "utf8").matchAll(
        /^(?:import|export)\s+(type\s+)?[^;]*?from\s+"(\.{1,2}\/[^"]+)"/gms,
      ),
    ].map((m) => ({
      target: join(file, "..", (m[2] as string).replace(/\.js$/, ".ts")),
      typeOnly: m[1] !== undefined,
    }));

  /** Strongly connected components of more than one node (Tarjan). */
  function cycles(graph: Map<string, Set<string>>): string[][] {
    let next = 0;
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const out: string[][] = [];
    const visit = (v: string) => {
      index.set(v, next);
      low.set(v, next++);
      stack.push(v);
      onStack.add(v);
      for (const w of graph.get(v) ?? []) {
        if (!graph.has(w)) continue;
        if (!index.has(w)) {
          visit(w);
          low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
        } else if (onStack.has(w))
          low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
      }
      if (low.get(v) === index.get(v)) {
        const c: string[] = [];
        let w: string;
        do {
          w = stack.pop() as string;
          onStack.delete(w);
          c.push(w);
        } while (w !== v);
        if (c.length > 1) out.push(c.sort());
      }
    };
    for (const v of graph.keys()) if (!index.has(v)) visit(v);
    return out;
  }

  it("no module imports itself through others, type-only imports included", () => {
    const graph = new Map(
      all.map((f) => [relative(SRC, f), new Set(imports(f).map((i) => relative(SRC, i.target)))]),
    );
    expect(cycles(graph)).toEqual([]);
  });

  it("the layers form no cycle, type imports included (ARCHITECTURE.md §3's one direction)", () => {
    const layerOf = (p: string) => (p.includes("/") ? (p.split("/")[0] as string) : "root");
    const graph = new Map<string, Set<string>>();
    for (const f of all) {
      const from = layerOf(relative(SRC, f));
      if (from === "root") continue;
      const edges = graph.get(from) ?? new Set<string>();
      for (const i of imports(f)) {
        const to = layerOf(relative(SRC, i.target));
        if (to !== from) edges.add(to);
      }
      graph.set(from, edges);
    }
    expect(cycles(graph)).toEqual([]);
  });

  it("reads randomness and the clock only through core/rng and core/clock", () => {
    const offenders = all.filter((f) => {
      if (f.endsWith(join("core", "clock.ts"))) return false;
      const text = readFileSync(f, "utf8").replace(/\/\/.*$/gm, "");
      return /Math\.random\(|Date\.now\(|new Date\(\)/.test(text);
    });
    expect(offenders.map((f) => relative(SRC, f))).toEqual([]);
  });

  it("never exits the process outside the CLI", () => {
    const offenders = all.filter(
      (f) =>
        !relative(SRC, f).startsWith("cli/") && /process\.exit\(/.test(readFileSync(f, "utf8")),
    );
    expect(offenders.map((f) => relative(SRC, f))).toEqual([]);
  });
});
