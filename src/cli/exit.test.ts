import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EXIT, EXIT_FOR, exitCodeFor } from "./exit.js";

/** Every error code the sources raise (`new ProvaelError("…"` and `asProvaelError(…, "…")`). */
function codesRaised(dir: string): Set<string> {
  const found = new Set<string>();
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile() || !e.name.endsWith(".ts") || e.name.endsWith(".test.ts")) continue;
    const text = readFileSync(join(e.parentPath, e.name), "utf8");
    for (const m of text.matchAll(/ProvaelError\(\s*"([a-z]+\/[a-z-]+)"/g))
      found.add(m[1] as string);
  }
  return found;
}

describe("exit codes", () => {
  it("gives every error code the sources raise an exit of its own", () => {
    const raised = codesRaised(join(import.meta.dirname, ".."));
    expect(raised.size).toBeGreaterThan(20);
    const missing = [...raised].filter((c) => !(c in EXIT_FOR));
    expect(missing).toEqual([]);
  });

  it("maps bad input to 2, an unfinished run to 3 and run-time failures to 4", () => {
    expect(exitCodeFor("config/invalid")).toBe(EXIT.usage);
    expect(exitCodeFor("io/read")).toBe(EXIT.usage);
    expect(exitCodeFor("calibration/degenerate")).toBe(EXIT.usage);
    expect(exitCodeFor("run/journal-corrupt")).toBe(EXIT.usage);
    expect(exitCodeFor("run/plan-mismatch")).toBe(EXIT.usage);
    expect(exitCodeFor("run/incomplete")).toBe(EXIT.incomplete);
    expect(exitCodeFor("policy/timeout")).toBe(EXIT.runtime);
    for (const [code, exit] of Object.entries(EXIT_FOR)) {
      if (code.startsWith("config/") || code.startsWith("io/")) expect(exit, code).toBe(EXIT.usage);
    }
  });
});
