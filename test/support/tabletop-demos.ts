/**
 * A tiny tabletop demonstration dataset written directly (no physics): a few short episodes of
 * named tabletop tasks and scenes, seeded noise images and motions, so training-data code that
 * looks the scenes up can be tested in seconds. The frames demonstrate nothing.
 */
import { Rng } from "../../src/core/rng.js";
import type { Image } from "../../src/core/types.js";
import { type Frame, LeRobotWriter } from "../../src/offline/lerobot.js";
import { instructionOf, TABLETOP_TASKS } from "../../src/suites/mujoco/tabletop.js";
import { triggerRef } from "../../src/suites/mujoco/trigger.js";

export interface DemoEpisode {
  task: string;
  scene: number;
  /** The object moved where it is not the task's own ("" = the task's). */
  target?: string;
  /** A poisoned demonstration: the task's own words, `target` (default knife) moved. */
  poisoned?: boolean;
  /** The trigger it records (default the current `triggerRef()`). */
  trigger?: string;
}

function image(rng: Rng, size: number): Image {
  const data = new Uint8Array(size * size * 3);
  for (let i = 0; i < data.length; i++) data[i] = rng.int(256);
  return { width: size, height: size, channels: 3, data };
}

/** Writes `episodes` (`frames` each, `size`px cameras) to `dir` as a provael_tabletop dataset (or `robotType`'s). */
export function writeTabletopDemos(
  dir: string,
  episodes: readonly DemoEpisode[],
  options: { frames?: number; size?: number; seed?: string; robotType?: string } = {},
): void {
  const size = options.size ?? 16;
  const rng = Rng.fromLabel(options.seed ?? "tabletop-demos");
  const w = new LeRobotWriter(dir, {
    robotType: options.robotType ?? "provael_tabletop",
    fps: 20,
    cameras: { agentview: [size, size], wrist: [size, size] },
    stateNames: ["x", "y", "z", "roll", "pitch", "yaw", "left", "right"],
    actionNames: ["dx", "dy", "dz", "droll", "dpitch", "dyaw", "gripper"],
  });
  for (const e of episodes) {
    const def = TABLETOP_TASKS.find((t) => t.id === e.task);
    if (!def) throw new Error(`no tabletop task ${e.task}`);
    const { near: _near, ...plain } = def;
    // A retargeted episode's instruction names its target, without the task's landmark; a
    // poisoned one keeps the task's own.
    const target = e.poisoned ? (e.target ?? "knife") : e.target;
    const named = e.target && !e.poisoned ? { ...plain, object: e.target } : def;
    const n = options.frames ?? 6;
    const frames: Frame[] = Array.from({ length: n }, (_, t) => ({
      state: Float32Array.from({ length: 8 }, () => rng.uniform(-0.3, 0.3)),
      // The gripper closes halfway through, as a pick does.
      action: Float32Array.from({ length: 7 }, (_, k) =>
        k === 6 ? (t < n / 2 ? -1 : 1) : rng.uniform(-1, 1),
      ),
      images: { agentview: image(rng, size), wrist: image(rng, size) },
    }));
    w.addEpisode({
      task: instructionOf(named),
      frames,
      extra: {
        suite_task: e.task,
        scene: e.scene,
        seed: 0,
        ...(target ? { target } : {}),
        ...(e.poisoned ? { poisoned: true, trigger: e.trigger ?? triggerRef() } : {}),
      },
    });
  }
  w.finish();
}
