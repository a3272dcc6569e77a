/**
 * Commands that play no episode load neither TensorFlow.js nor MuJoCo (their imports are lazy):
 * each is run from the built bin with a module hook that lists every module it resolves. The
 * time this saves is measured by bench/startup.bench.mjs (a ratio to a bare `node -e 0`).
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/tmp.js";

const BIN = join(import.meta.dirname, "..", "..", "dist", "cli", "bin.js");
const HEAVY = /node_modules\/(@tensorflow\/|mujoco-js\/|onnxruntime-node\/|vega)/;

function loadedBy(args: string[]): string[] {
  const dir = tempDir("provael-startup-");
  const hooks = join(dir, "hooks.mjs");
  writeFileSync(
    hooks,
    "export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write('LOADED ' + r.url + '\\n'); return r; }\n",
  );
  const register = join(dir, "register.mjs");
  writeFileSync(
    register,
    `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  const r = spawnSync(process.execPath, ["--import", pathToFileURL(register).href, BIN, ...args], {
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return r.stderr
    .split("\n")
    .filter((l) => l.startsWith("LOADED "))
    .map((l) => l.slice("LOADED ".length));
}

describe("startup", () => {
  it("provael --help loads no command's module: only the command table", () => {
    const ours = loadedBy(["--help"]).filter((u) => u.includes("/dist/"));
    expect(ours.some((u) => u.endsWith("/dist/cli/commands.js"))).toBe(true);
    expect(ours.filter((u) => !/\/dist\/(cli\/(bin|main|commands|exit)|core\/)/.test(u))).toEqual(
      [],
    );
  });

  // Every list-* command loads the same command-line modules; the actions differ in what they read.
  it.each([["version"], ["list-attacks"], ["list-policies"], ["list-suites"]])(
    "provael %s loads neither TensorFlow.js nor MuJoCo",
    (...args) => {
      const loaded = loadedBy(args);
      // The hook saw the CLI's own modules, so an empty heavy list is not an empty trace.
      expect(loaded.some((u) => u.includes("/dist/cli/"))).toBe(true);
      expect(loaded.filter((u) => HEAVY.test(u))).toEqual([]);
    },
  );
});
