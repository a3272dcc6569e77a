/**
 * Scenes of the MuJoCo suites: fixed initial object placements per task, generated on demand
 * from a labelled generator per (suite, task, index) (src/suites/mujoco/scene-generator.ts), so a
 * suite has as many scenes as the protocol needs and scene i is the same in every process. Each
 * source generates in its own worlds, opened without cameras, never in an episode's world.
 */
import { ProvaelError } from "../../core/errors.js";
import type { SceneRoles } from "../../core/types.js";
import { DEFAULT_RENDER, MujocoWorld, type Placement, type WorldConfig } from "./world.js";

export type { Placement } from "./world.js";

/** Scenes per task of the generated MuJoCo suites (indices 0..SCENES_PER_TASK-1). */
export const SCENES_PER_TASK = 10_000;

/**
 * Scene ranges by role (docs/protocol.md §scenes): training 20-99 (what `tiny-vla` was trained
 * on), calibration 1000-1999 (what `provael calibrate` plays by default), evaluation the rest.
 * The ranges are half-open, [start, end).
 */
export const MUJOCO_SCENE_ROLES: SceneRoles = {
  training: [[20, 100]],
  calibration: [[1000, 2000]],
  evaluation: [
    [0, 20],
    [100, 1000],
    [2000, SCENES_PER_TASK],
  ],
};

/** Where a task's generator draws its scenes, and the world it needs for the checks. */
export interface SceneTask {
  world: Pick<WorldConfig, "file" | "objects" | "graspable">;
  generate(world: MujocoWorld, index: number): Placement;
}

/** A suite's scenes: generated once per (task, index) and cached for the process. */
export class SceneSource {
  private readonly cache = new Map<string, Placement>();
  private readonly worlds = new Map<string, Promise<MujocoWorld>>();

  constructor(
    readonly suite: string,
    private readonly tasks: ReadonlyMap<string, SceneTask>,
    readonly count = SCENES_PER_TASK,
  ) {}

  /** Scene `index` of `task`; throws `config/invalid` for an index out of range. */
  async placement(task: string, index: number): Promise<Placement> {
    const spec = this.tasks.get(task);
    if (!spec) {
      throw new ProvaelError(
        "suite/load",
        `suite '${this.suite}' has no scenes for task '${task}'`,
        {
          details: { task },
        },
      );
    }
    if (!Number.isInteger(index) || index < 0 || index >= this.count) {
      throw new ProvaelError(
        "config/invalid",
        `scene ${index} is out of range for task '${task}' (0..${this.count - 1})`,
        { details: { task, scene: index, scenes: this.count } },
      );
    }
    const key = `${task}/${index}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const world = await this.worldFor(spec);
    const placement = spec.generate(world, index);
    this.cache.set(key, placement);
    return placement;
  }

  /** Closes the generator worlds (the cache stays). */
  async close(): Promise<void> {
    const worlds = [...this.worlds.values()];
    this.worlds.clear();
    for (const w of worlds) (await w).close();
  }

  private worldFor(spec: SceneTask): Promise<MujocoWorld> {
    const existing = this.worlds.get(spec.world.file);
    if (existing) return existing;
    const opened = MujocoWorld.open({
      ...spec.world,
      render: { ...DEFAULT_RENDER, enabled: false },
    });
    this.worlds.set(spec.world.file, opened);
    return opened;
  }
}
