import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { build } from "rolldown";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine, packageRoot } from "./engine.js";
import type { MujocoInstance } from "./instance.js";

const run = promisify(execFile);

/** A fixed episode: scene 3 of a tabletop task, 40 ticks of a fixed action pattern. */
const EPISODE = `
const { createTabletopSuite } = await import(process.argv[1]);
const sim = await createTabletopSuite({ render: { enabled: false } }).open();
await sim.reset({ task: "kitchen_blue_ball", scene: 3, seed: 0 });
for (let t = 0; t < 40; t++) {
  const a = Float32Array.of(Math.sin(t / 5), Math.cos(t / 7), -0.5, 0.1 * Math.sin(t), 0, 0.2, t < 20 ? -1 : 1);
  sim.step(a);
}
process.stdout.write(sim.current().engine.qposDigest());
await sim.close();
`;

/**
 * Bundles the suite from src/ for the child processes (vite's bundler, already installed), so the
 * test never reads a dist/ that a concurrent build may be rewriting. The bundle sits two folders
 * below `.provael-tmp/` so that, like dist/suites/mujoco/engine.js, it finds the package root
 * three folders up.
 */
async function bundleSuite(): Promise<{ file: string; dir: string }> {
  const parent = join(packageRoot(), ".provael-tmp");
  mkdirSync(parent, { recursive: true });
  const dir = mkdtempSync(join(parent, "engine-test-"));
  const file = join(dir, "bundle", "tabletop.mjs");
  await build({
    input: join(packageRoot(), "src", "suites", "mujoco", "tabletop.ts"),
    platform: "node",
    external: (id) => !id.startsWith(".") && !id.startsWith("/"),
    output: { file, format: "esm" },
    logLevel: "silent",
  });
  return { file, dir };
}

describe("engine", () => {
  let engine: Engine;
  let bundle: { file: string; dir: string };
  beforeAll(async () => {
    engine = await Engine.load("tabletop_kitchen.xml");
    bundle = await bundleSuite();
  });
  afterAll(() => {
    engine.close();
    rmSync(bundle.dir, { recursive: true, force: true });
    try {
      rmdirSync(join(packageRoot(), ".provael-tmp"));
    } catch {
      // Another test still uses it.
    }
  });

  it("loads the MJCF from the package's assets and names its parts", () => {
    expect(existsSync(join(packageRoot(), "assets", "mujoco", "robot.xml"))).toBe(true);
    expect(engine.model.nu).toBe(8);
    expect(engine.id("site", "eef")).toBeGreaterThanOrEqual(0);
    expect(engine.findId("body", "no_such_body")).toBe(-1);
    expect(() => engine.id("body", "no_such_body")).toThrow(/no body named/);
  });

  it("restores a saved state so the continuation is bit-identical", () => {
    engine.resetData();
    (engine.data.ctrl as Float64Array).set([0.3, 0.4, 1.0, 0, 0.5, 0, 0.02, 0.02]);
    engine.step(50);
    const saved = engine.saveState();
    engine.step(100);
    const first = engine.qposDigest();
    engine.restoreState(saved);
    engine.step(100);
    expect(engine.qposDigest()).toBe(first);
  });

  it("gives the same final qpos in separate processes and in this one", async () => {
    expect(existsSync(bundle.file)).toBe(true);
    const child = () =>
      run(process.execPath, ["--input-type=module", "-e", EPISODE, bundle.file], {
        timeout: 60_000,
      }).then((r) => r.stdout.trim());
    const [a, b] = await Promise.all([child(), child()]);
    expect(a).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(b).toBe(a);

    const { createTabletopSuite } = await import("./tabletop.js");
    const sim = (await createTabletopSuite({
      render: { enabled: false },
    }).open()) as MujocoInstance;
    await sim.reset({ task: "kitchen_blue_ball", scene: 3, seed: 0 });
    for (let t = 0; t < 40; t++) {
      sim.step(
        Float32Array.of(
          Math.sin(t / 5),
          Math.cos(t / 7),
          -0.5,
          0.1 * Math.sin(t),
          0,
          0.2,
          t < 20 ? -1 : 1,
        ),
      );
    }
    expect(sim.current()?.engine.qposDigest()).toBe(a);
    await sim.close();
  });
});
