/** Layering and determinism rules that hold for the whole of src/. */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
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
  // A red-team run in a page: the plan, the checks and the outputs of `attack`, in the browser.
  playground: [
    "rundir",
    "core",
    "stats",
    "playground",
    "kernel",
    "runner",
    "report",
    "config",
    "suites",
    "policies",
    "attacks",
    "judges",
    "defenses",
  ],
  cli: [
    "playground",
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

  /**
   * Two hosts (ARCHITECTURE.md §3): what a page runs is everything the playground's browser
   * modules reach by value imports, with each host module's browser twin (`x.browser.ts` beside
   * `x.ts`) in its place, as the bundle resolves it (scripts/build-playground.mjs).
   */
  const BROWSER_ENTRIES = [
    "playground/session.ts",
    "playground/player.ts",
    "playground/web/worker.ts",
    "playground/web/page.ts",
    "playground/web/app.ts",
    "view/client/replay/worker.ts",
  ];
  const NODE_ONLY_PACKAGES = [
    "piscina",
    "pngjs",
    "ws",
    "undici",
    "commander",
    "onnxruntime-node",
    "cli-progress",
  ];
  const twinOf = (f: string) => {
    const twin = f.replace(/\.ts$/, ".browser.ts");
    return existsSync(twin) ? twin : f;
  };
  function browserClosure(): string[] {
    const seen = new Set<string>();
    const queue = BROWSER_ENTRIES.map((e) => join(SRC, e)).filter((f) => existsSync(f));
    while (queue.length > 0) {
      const f = twinOf(queue.pop() as string);
      if (seen.has(f)) continue;
      seen.add(f);
      for (const i of imports(f)) if (!i.typeOnly) queue.push(i.target);
    }
    return [...seen];
  }

  it("the browser-safe modules import no node: module, Node-only package or Node global", () => {
    const closure = browserClosure();
    expect(closure.length).toBeGreaterThan(100);
    const offenders: string[] = [];
    for (const f of closure) {
      const text = readFileSync(f, "utf8")
        .replace(/\/\*[\s\S]*?\*\//g, "")
        .replace(/^\s*\/\/.*$/gm, "");
      for (const m of text.matchAll(
        /^(?:import|export)\s+(type\s+)?[^;]*?from\s+"([^".][^"]*)"/gms,
      )) {
        const spec = m[2] as string;
        if (m[1] !== undefined) continue;
        if (
          spec.startsWith("node:") ||
          NODE_ONLY_PACKAGES.some((p) => spec === p || spec.startsWith(`${p}/`))
        )
          offenders.push(`${relative(SRC, f)} imports ${spec}`);
      }
      for (const g of text.matchAll(/(?<![\w.-])(Buffer\.|process\.|__dirname|require\()/g))
        offenders.push(`${relative(SRC, f)} uses ${g[1]}`);
    }
    expect(offenders).toEqual([]);
  });

  it("each browser twin exports what its Node module exports", () => {
    const exported = (f: string) =>
      [
        ...readFileSync(f, "utf8").matchAll(
          /^export\s+(?:async\s+)?(?:function|const|class|type|interface)\s+(\w+)/gm,
        ),
      ]
        .map((m) => m[1] as string)
        .sort();
    const twins = all.filter((f) => f.endsWith(".browser.ts"));
    expect(twins.length).toBeGreaterThan(0);
    for (const twin of twins) {
      const node = twin.replace(/\.browser\.ts$/, ".ts");
      const missing = exported(node).filter((n) => !exported(twin).includes(n));
      expect(missing, relative(SRC, twin)).toEqual([]);
    }
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
