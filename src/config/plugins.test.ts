import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { tempDir } from "../../test/support/tmp.js";
import { attacks } from "../attacks/index.js";
import { isProvaelError } from "../core/errors.js";
import { defineAttack, pluginKind } from "../core/registry.js";
import { policies } from "../policies/index.js";
import { suites } from "../suites/index.js";
import { attackProblems, policyProblems, suiteProblems } from "./plugin-contract.js";
import { loadPlugins, pluginSource } from "./plugins.js";

describe("the plugin contract", () => {
  // The checks a plugin meets at load are the ones every built-in meets.
  it.each(attacks.items.map((a) => [a.id, a] as const))("built-in attack %s passes", (_, a) => {
    expect(attackProblems(a)).toEqual([]);
  });
  it.each(policies.items.map((p) => [p.id, p] as const))("built-in policy %s passes", (_, p) => {
    expect(policyProblems(p)).toEqual([]);
  });
  it.each(suites.items.map((s) => [s.id, s] as const))("built-in suite %s passes", (_, s) => {
    expect(suiteProblems(s)).toEqual([]);
  });

  it("names every problem of a bad attack", () => {
    const problems = attackProblems({
      id: "Bad",
      family: "",
      role: "control",
      eai: "EAI99" as never,
      access: "telepathy" as never,
      description: "x",
      requires: { policy: ["mind"] as never },
      params: z.object({ n: z.number() }),
      begin: () => ({}),
    });
    expect(problems).toHaveLength(7);
  });
});

describe("loadPlugins", () => {
  const dir = tempDir("provael-plugin-");

  it("names a policy's options that are not a list of names", () => {
    const good = policies.get("stub");
    expect(policyProblems({ ...good, options: "replan" as unknown as string[] })).toEqual([
      "options must be an array of option names (the --policy-option keys it reads)",
    ]);
    const { options: _declared, ...undeclared } = good;
    expect(policyProblems(undeclared)).toEqual([]);
  });

  it("brands define* objects so the loader can tell their kind", () => {
    const a = defineAttack({
      id: "x",
      family: "f",
      role: "treatment",
      eai: null,
      access: "none",
      description: "d",
      requires: {},
      params: z.object({}),
      begin: () => ({}),
    });
    expect(pluginKind(a)).toBe("attack");
    expect(pluginKind({ ...a })).toBeNull();
    expect(Object.keys(a)).not.toContain("kind");
  });

  it("refuses a file that exports no plugin, and a changed file", async () => {
    const empty = join(dir, "empty.mjs");
    writeFileSync(empty, "export const x = 1;\n");
    await expect(loadPlugins([pluginSource(empty)])).rejects.toThrow(/exports no plugin/);
    const stale = { ...pluginSource(empty), digest: "sha256:00" };
    await expect(loadPlugins([stale])).rejects.toThrow(/bytes changed/);
  });

  it("refuses a plugin that takes a built-in's id", async () => {
    const file = join(dir, "clash.mjs");
    const registry = new URL("../core/registry.ts", import.meta.url).href;
    writeFileSync(
      file,
      `import { defineAttack } from ${JSON.stringify(registry)};
       import { z } from "zod";
       export default [defineAttack({ id: "none", family: "baseline", role: "baseline", eai: null,
         access: "none", description: "again", requires: {}, params: z.object({}),
         begin: () => ({}) })];\n`,
    );
    const error = await loadPlugins([pluginSource(file)]).catch((e: unknown) => e);
    expect(isProvaelError(error) && error.code).toBe("config/plugin");
    expect(String(error)).toContain("already registered");
  });
});
