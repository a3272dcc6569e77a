import { describe, expect, it } from "vitest";
import { stubPlan } from "../../test/support/stub-run.js";
import type { Cell } from "../core/plan.js";
import { episodeContext, playEpisode } from "../kernel/index.js";
import { policies } from "../policies/index.js";
import { suites } from "../suites/index.js";
import { actionReplayRefusal, replayActions } from "./replay-actions.js";

/** Plays one stub cell as the runner does, then replays it from its recorded actions. */
async function playAndReplay(arm: string, tamper?: (action: number[]) => void) {
  const suite = suites.get("stub");
  const task = suite.tasks()[0];
  if (!task) throw new Error("stub has no task");
  const plan = stubPlan({ tasks: [task.id], arms: ["none", arm], seed: 0, seeds: 1 });
  const cell: Cell = { id: `c${"0".repeat(19)}1`, task: task.id, arm, seed: 0, repeat: 0 };
  const played = await playEpisode(
    cell,
    episodeContext(cell, {
      plan,
      suite,
      instance: await suite.open(),
      policy: await policies.get("stub").load({}),
      calibrations: {},
    }),
  );
  const steps = played.trajectory.map((s) => ({ ...s, action: [...s.action] }));
  if (tamper && steps[1]) tamper(steps[1].action);
  const frames: string[] = [];
  const index = await replayActions({
    plan,
    suite,
    instance: await suite.open({ cameras: suite.capabilities.cameras }),
    episode: played.record,
    steps,
    onFrame: (camera, step, image) => {
      expect(image.width * image.height).toBeGreaterThan(0);
      frames.push(`${camera}-${step}`);
    },
  });
  return { record: played.record, index, frames, cameras: suite.capabilities.cameras };
}

describe("replaying an episode from its recorded actions", () => {
  it("reproduces the recorded endpoints and path, with every camera at every step", async () => {
    const { record, index, frames, cameras } = await playAndReplay("random_offset");
    expect(record.steps).toBeGreaterThan(2);
    expect(index.reproduced).toEqual({ matches: true, differences: [] });
    expect(index.source).toBe("replay");
    expect(index.steps).toEqual([...Array(record.steps).keys()]);
    expect(frames).toHaveLength(record.steps * cameras.length);
    expect(index.timeline?.length).toBe(record.steps);
  });

  it("reports a replay that left the recorded path, and does not hide it", async () => {
    const { index } = await playAndReplay("none", (a) => {
      a[0] = (a[0] ?? 0) + 0.5;
    });
    expect(index.reproduced?.matches).toBe(false);
    expect(index.reproduced?.differences.join("; ")).toMatch(/end-effector at step 1/);
  });

  it("refuses what the page does not carry", () => {
    const plan = stubPlan({ tasks: ["t"], arms: ["none"], seed: 0, seeds: 1 });
    expect(actionReplayRefusal(plan, null)).toMatch(/not one this page carries/);
    expect(
      actionReplayRefusal({ ...plan, calibration: { t: "sha256:x" } }, suites.get("stub")),
    ).toMatch(/calibration/);
    expect(actionReplayRefusal(plan, suites.get("stub"))).toBeNull();
  });
});
