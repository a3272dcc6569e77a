/**
 * The SuiteInstance shared by the MuJoCo suites: one world per MJCF file (opened on first use),
 * reset to a generated scene, step by one control tick, report state, observation and success.
 */
import { ProvaelError } from "../../core/errors.js";
import type {
  Action,
  ResetOptions,
  SimState,
  StepResult,
  SuiteInstance,
  SuiteOpenOptions,
  TaskSpec,
} from "../../core/types.js";
import type { ControllerSettings } from "./controller.js";
import type { SceneSource } from "./scenes.js";
import { DEFAULT_RENDER, MujocoWorld, type RenderSettings } from "./world.js";

/** A task as the MuJoCo instance runs it. */
export interface MujocoTask {
  spec: TaskSpec;
  /** MJCF file of the task's layout. */
  file: string;
  /** Bodies whose poses the state reports. */
  objects: readonly string[];
  /** Movable objects (grasp geometry reported). */
  graspable: readonly string[];
  /** Instantaneous task success. */
  success(world: MujocoWorld, state: SimState): boolean;
  /**
   * The task with another object (one of `spec.targets`) as the one to move: its instruction
   * and success. Absent when the task cannot be retargeted.
   */
  retarget?(object: string): GoalOf;
}

/** What an episode is judged against: the instruction it shows and its success. */
export interface GoalOf {
  instruction: string;
  success(world: MujocoWorld, state: SimState): boolean;
}

/**
 * Narrows rendering to the cameras the policy reads; none turns rendering off. The suite's own
 * options still choose image size and shadows.
 */
export function withCameras(
  options: MujocoSuiteOptions,
  open: SuiteOpenOptions | undefined,
): MujocoSuiteOptions {
  if (open?.cameras === undefined) return options;
  const cameras = open.cameras.filter((c) =>
    (options.render?.cameras ?? DEFAULT_RENDER.cameras).includes(c),
  );
  return {
    ...options,
    render: {
      ...options.render,
      cameras,
      enabled: cameras.length > 0 && (options.render?.enabled ?? true),
    },
  };
}

/** Options a MuJoCo suite takes (`createTabletopSuite(options)`, `createReachSuite(options)`). */
export interface MujocoSuiteOptions {
  /** Cameras: `{ enabled: false }` gives zero-size images (fast expert runs, benchmarks). */
  render?: Partial<RenderSettings>;
  controller?: Partial<ControllerSettings>;
}

export class MujocoInstance implements SuiteInstance {
  private readonly worlds = new Map<string, MujocoWorld>();
  private world: MujocoWorld | undefined;
  private task: MujocoTask | undefined;
  private goal: GoalOf | undefined;
  private digest = "";

  constructor(
    private readonly suiteId: string,
    private readonly tasks: ReadonlyMap<string, MujocoTask>,
    private readonly scenes: SceneSource,
    private readonly options: MujocoSuiteOptions,
  ) {}

  async reset(options: ResetOptions): Promise<StepResult> {
    const task = this.tasks.get(options.task);
    if (!task) {
      throw new ProvaelError(
        "config/unknown-task",
        `unknown task '${options.task}' in suite '${this.suiteId}'`,
        { hint: "run `provael list-suites` to see the tasks", details: { task: options.task } },
      );
    }
    const goal = this.goalOf(task, options.target);
    const placement = await this.scenes.placement(task.spec.id, options.scene);
    const world = await this.worldFor(task);
    world.placeScene(placement);
    this.digest = world.engine.stateDigest();
    world.applyEdits(options.edits ?? []);
    this.world = world;
    this.task = task;
    this.goal = goal;
    return this.result();
  }

  /** The task's own goal, or the retargeted one (checked before the scene is placed). */
  private goalOf(task: MujocoTask, target: string | undefined): GoalOf {
    const own = { instruction: task.spec.instruction, success: task.success };
    if (target === undefined) return own;
    const targets = task.spec.targets ?? [];
    if (!task.retarget || !targets.includes(target)) {
      throw new ProvaelError(
        "config/invalid",
        `task '${task.spec.id}' of suite '${this.suiteId}' cannot be retargeted to '${target}'`,
        {
          hint:
            targets.length > 0
              ? `its targets are: ${targets.join(", ")}`
              : "this task has no other targets",
          details: { task: task.spec.id, target },
        },
      );
    }
    return task.retarget(target);
  }

  sceneDigest(): string {
    return this.digest;
  }

  step(action: Action): StepResult {
    if (!this.world || !this.task) {
      throw new ProvaelError("suite/error", `suite '${this.suiteId}' stepped before reset`);
    }
    this.world.tick(action);
    return this.result();
  }

  /** The world of the current episode (for tests and scripts). */
  current(): MujocoWorld | undefined {
    return this.world;
  }

  close(): void {
    void this.scenes.close();
    for (const w of this.worlds.values()) w.close();
    this.worlds.clear();
    this.world = undefined;
  }

  private async worldFor(task: MujocoTask): Promise<MujocoWorld> {
    const existing = this.worlds.get(task.file);
    if (existing) return existing;
    const world = await MujocoWorld.open({
      file: task.file,
      objects: task.objects,
      graspable: task.graspable,
      render: { ...DEFAULT_RENDER, ...this.options.render },
      ...(this.options.controller ? { controller: this.options.controller } : {}),
    });
    this.worlds.set(task.file, world);
    return world;
  }

  private result(): StepResult {
    const world = this.world as MujocoWorld;
    const goal = this.goal as GoalOf;
    const state = world.simState();
    // MuJoCo resets a diverged simulation itself; a non-finite pose means it cannot go on.
    const finite = state.eefPos?.every(Number.isFinite) ?? false;
    return {
      obs: world.observation(goal.instruction, state),
      state,
      taskSuccess: finite && goal.success(world, state),
      done: !finite,
    };
  }
}
