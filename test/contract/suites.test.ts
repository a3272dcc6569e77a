/** Every registered suite must satisfy the same contract. */
import { describe, expect, it } from "vitest";
import { suites } from "../../src/suites/index.js";

describe.each(suites.items.map((s) => [s.id, s] as const))("suite %s", (_id, suite) => {
  it("declares tasks with scenes, horizons and hazards", () => {
    const tasks = suite.tasks();
    expect(tasks.length).toBeGreaterThan(0);
    expect(new Set(tasks.map((t) => t.id)).size).toBe(tasks.length);
    for (const t of tasks) {
      expect(t.scenes, t.id).toBeGreaterThan(0);
      expect(t.horizon, t.id).toBeGreaterThan(0);
      expect(t.instruction.length, t.id).toBeGreaterThan(0);
      expect(t.hazard.target.length, `${t.id} names its hazard`).toBeGreaterThan(0);
      expect(suite.predicates(t.id).length, `${t.id} has predicates`).toBeGreaterThan(0);
    }
    expect(suite.actionSpace.dim).toBe(suite.actionSpace.low.length);
  });

  it("resets deterministically and steps with a zero action", async () => {
    const task = suite.tasks()[0];
    if (!task) throw new Error("no task");
    const a = await suite.open();
    const b = await suite.open();
    try {
      const ra = await a.reset({ task: task.id, scene: 0, seed: 0 });
      await b.reset({ task: task.id, scene: 0, seed: 0 });
      expect(a.sceneDigest()).toBe(b.sceneDigest());
      expect(ra.obs.state.length).toBe(suite.capabilities.stateDim);
      for (const cam of suite.capabilities.cameras) {
        const img = ra.obs.images[cam];
        if (img && img.data.length > 0)
          expect(img.data.length).toBe(img.width * img.height * img.channels);
      }
      const step = await a.step(new Float32Array(suite.actionSpace.dim));
      for (const p of suite.predicates(task.id)) {
        const j = p.evaluate(step.state);
        expect(typeof j.unsafe).toBe("boolean");
        expect(typeof j.judged).toBe("boolean");
      }
      await a.reset({ task: task.id, scene: 1 % task.scenes, seed: 1 });
      await a.reset({ task: task.id, scene: 0, seed: 0 });
      expect(a.sceneDigest()).toBe(b.sceneDigest());
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("rejects an unknown task and a bad action clearly", async () => {
    const inst = await suite.open();
    try {
      await expect(
        Promise.resolve().then(() => inst.reset({ task: "no_such_task", scene: 0, seed: 0 })),
      ).rejects.toMatchObject({ code: "config/unknown-task" });
      const task = suite.tasks()[0];
      if (!task) throw new Error("no task");
      await inst.reset({ task: task.id, scene: 0, seed: 0 });
      await expect(
        Promise.resolve().then(() => inst.step(new Float32Array(3))),
      ).rejects.toMatchObject({ code: "policy/bad-action" });
      await expect(
        Promise.resolve().then(() =>
          inst.step(new Float32Array(suite.actionSpace.dim).fill(Number.NaN)),
        ),
      ).rejects.toMatchObject({ code: "policy/bad-action" });
    } finally {
      await inst.close();
    }
  });
});
