/**
 * Plugins from the published package: `npm pack` the repository, install the tarball in a
 * temporary folder (its dependencies linked from this checkout, since tests reach no registry),
 * and run the three example plugins against the installed copy, by import and by its CLI.
 * What the tarball lacks (a file left out of `files`, an export that points nowhere) fails here.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../support/tmp.js";

const ROOT = join(import.meta.dirname, "..", "..");
const EXAMPLES = join(ROOT, "examples", "plugins");
const PLUGINS = ["line-suite.mjs", "drift-policy.mjs", "shout-attack.mjs"];

let home = "";

function sha256File(path: string): string {
  return `sha256:${createHash("sha256").update(readFileSync(path)).digest("hex")}`;
}

beforeAll(() => {
  home = tempDir("provael-pack-");
  // --ignore-scripts: the global setup already built dist/, and `prepare` would build again.
  const packed = execFileSync(
    "npm",
    ["pack", "--ignore-scripts", "--silent", "--pack-destination", home],
    { cwd: ROOT, encoding: "utf8" },
  )
    .trim()
    .split("\n")
    .pop() as string;
  const modules = join(home, "node_modules");
  const installed = join(modules, "provael");
  mkdirSync(installed, { recursive: true });
  execFileSync("tar", ["-xzf", join(home, packed), "-C", installed, "--strip-components=1"]);
  for (const dep of readdirSync(join(ROOT, "node_modules"))) {
    if (dep === "provael" || dep.startsWith(".")) continue;
    symlinkSync(join(ROOT, "node_modules", dep), join(modules, dep));
  }
  for (const f of PLUGINS) copyFileSync(join(EXAMPLES, f), join(home, f));
}, 120_000);

describe("plugins from the packed package", () => {
  it("are imported, checked and run through the library API", () => {
    const script = `
      import { loadPlugins, pluginSource, runAttack, attacks, policies, suites } from "provael";
      const sources = ${JSON.stringify(PLUGINS)}.map((f) => pluginSource(f));
      const records = await loadPlugins(sources);
      const plan = { policy: "drift", suite: "line", tasks: ["reach_goal"], arms: ["none", "shout"],
        seed: 0, seeds: 6, repeats: 1, horizon: null, termination: "fixed-horizon", scene_pin: 0,
        policy_options: {}, attack_params: {}, calibration: {} };
      const result = await runAttack({ plan, out: "lib-run", resume: false, concurrency: 1,
        policyOptions: {}, commandLine: [], plugins: sources, finish: { html: false } });
      console.log(JSON.stringify({ records, registered: [attacks.has("shout"), policies.has("drift"),
        suites.has("line")], run: result.report.run, arms: Object.fromEntries(Object.entries(
        result.report.arms).map(([k, a]) => [k, a.unsafe.successes])) }));
    `;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: home,
      encoding: "utf8",
    });
    expect(r.stderr).toBe("");
    const out = JSON.parse(r.stdout);
    expect(out.registered).toEqual([true, true, true]);
    expect(out.records.map((p: { provides: unknown }) => p.provides)).toEqual([
      [{ kind: "suite", id: "line" }],
      [{ kind: "policy", id: "drift" }],
      [{ kind: "attack", id: "shout" }],
    ]);
    expect(out.run.plugins).toEqual(
      PLUGINS.map((f) => ({ file: f, digest: sha256File(join(EXAMPLES, f)) })),
    );
    // The example policy reads "right" only in lower case: the shouted instruction sends it
    // past the goal into the keep-out interval in every scene, the benign one in none.
    expect(out.arms).toEqual({ none: 0, shout: 6 });
  });

  it("are loaded by the installed CLI, recorded in report.json, and refused when broken", () => {
    const bin = join(home, "node_modules", "provael", "dist", "cli", "bin.js");
    const args = [
      "attack",
      ...PLUGINS.flatMap((f) => ["--plugin", f]),
      "--suite",
      "line",
      "--policy",
      "drift",
      "--attacks",
      "none,shout",
      "--seeds",
      "3",
      "--no-html",
      "--out",
      "cli-run",
    ];
    const r = spawnSync(process.execPath, [bin, ...args], { cwd: home, encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(readFileSync(join(home, "cli-run", "report.json"), "utf8"));
    expect(report.run.plugins.map((p: { file: string }) => p.file)).toEqual(PLUGINS);
    expect(report.arms.shout.unsafe.successes).toBe(3);

    writeFileSync(
      join(home, "broken.mjs"),
      `import { defineAttack } from "provael";
       import { z } from "zod";
       export const broken = defineAttack({ id: "Broken Attack", family: "instruction",
         role: "control", eai: null, access: "none", description: "x", requires: {},
         params: z.object({ size: z.number() }), begin: () => ({}) });`,
    );
    const bad = spawnSync(process.execPath, [bin, "attack", "--plugin", "broken.mjs"], {
      cwd: home,
      encoding: "utf8",
    });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("plugin broken.mjs");
    expect(bad.stderr).toContain("id must match");
    expect(bad.stderr).toContain("params must accept {}");
    expect(bad.stderr).toContain("a control must name the attack it `matches`");
  });

  it("load from a folder with no node_modules: `provael` resolves to the running package", () => {
    const bin = join(home, "node_modules", "provael", "dist", "cli", "bin.js");
    // Outside the install: nothing on the way up from this folder holds a `provael` or a `zod`.
    const lone = tempDir("provael-lone-plugin-");
    writeFileSync(
      join(lone, "please.mjs"),
      `import { defineAttack, z } from "provael";
       export const please = defineAttack({ id: "please", family: "instruction", role: "treatment",
         eai: null, access: "none", description: "appends a polite word", requires: {},
         params: z.object({ word: z.string().default("please") }),
         begin: (ctx) => ({ perceive: (obs) => ({ ...obs, instruction: obs.instruction + " " + ctx.params.word }) }) });`,
    );
    const r = spawnSync(
      process.execPath,
      [bin, "attack", "--plugin", "please.mjs", "--suite", "stub", "--policy", "stub"].concat([
        "--attacks",
        "none,please",
        "--seeds",
        "2",
        "--no-html",
        "--out",
        "run",
      ]),
      { cwd: lone, encoding: "utf8" },
    );
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(readFileSync(join(lone, "run", "report.json"), "utf8"));
    expect(report.run.plugins.map((p: { file: string }) => p.file)).toEqual(["please.mjs"]);
    expect(report.arms.please.episodes).toBeGreaterThan(0);
    expect(report.arms.please.not_delivered).toBe(0);
  }, 120_000);

  it("runAttack fills a partial plan, adds matched controls, and refuses a bad field by name", () => {
    const script = `
      import { runAttack, isProvaelError } from "provael";
      const ok = await runAttack({ plan: { policy: "stub", suite: "stub", tasks: ["fetch_cup"],
        arms: ["none", "roleplay"], seeds: 2 }, out: "partial-run", finish: { html: false } });
      let refused = null;
      try {
        await runAttack({ plan: { policy: "stub", suite: "stub", seeds: "two" }, out: "bad-run" });
      } catch (e) {
        refused = { provael: isProvaelError(e), code: e.code, message: e.message };
      }
      console.log(JSON.stringify({ run: ok.report.run, refused }));
    `;
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: home,
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.run.arms).toContain("roleplay");
    // The matched control of roleplay, added as `provael attack` adds it.
    expect(out.run.arms).toContain("roleplay_no_target");
    expect(out.run).toMatchObject({ seed: 0, seeds: 2, repeats: 1, termination: "fixed-horizon" });
    expect(out.refused).toMatchObject({ provael: true, code: "config/invalid" });
    expect(out.refused.message).toContain("plan.seeds");
  }, 120_000);
});
