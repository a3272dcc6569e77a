/**
 * An episode's frames replayed from its recorded actions (browser-safe: the page that opens run
 * directories runs it in a Web Worker). The suite is reset to the episode's scene, with the
 * arm's scene edits (a decoy, a sign), and stepped with the actions trajectories.jsonl (or the
 * journal) recorded, which are the actions the world received after the arm and the defenses:
 * neither the policy nor the arm is consulted again, so a run of any policy on a built-in suite
 * replays, a served one included. Every camera is captured before each step's action, as
 * `provael view` replays, and the task's predicates judge each step again: the replay is checked
 * against the recorded endpoints and end-effector path, and a difference is reported, not hidden.
 * The cameras show the scene; an arm that perturbs only the images the policy received
 * (a patch, noise) is not drawn on them.
 */
import { attacks } from "../attacks/index.js";
import type { EpisodeRecord } from "../core/episode.js";
import type { Cell, PlanSpec } from "../core/plan.js";
import { FRAMES_FORMAT } from "../core/protocol.js";
import type {
  Image,
  Observation,
  PolicyInstance,
  SceneEdit,
  Suite,
  SuiteInstance,
} from "../core/types.js";
import { beginArm, EpisodeSteps, emptyRecord, predicatesFor } from "../kernel/index.js";
import type { FramesIndex, TimelineStep, TrajectoryStepFile } from "../rundir/schema/index.js";
import { differences, timelineWatch } from "./replay-check.js";

/** How far a replayed end-effector position may lie from the recorded one (metres). */
export const POSE_TOLERANCE = 1e-6;

/** The recorded episode a replay starts from (a report's or a journal's episode record). */
export type RecordedEpisode = Pick<
  EpisodeRecord,
  | "cell"
  | "task"
  | "arm"
  | "seed"
  | "repeat"
  | "scene"
  | "steps"
  | "unsafe"
  | "first_unsafe_step"
  | "task_success"
  | "unsafe_steps"
  | "perturbed"
  | "instruction"
> & { defenses?: string[] | undefined };

/** Why a run's episodes cannot be replayed from their actions here (null: they can). */
export function actionReplayRefusal(plan: PlanSpec, suite: Suite | null): string | null {
  if (!suite) return `suite '${plan.suite}' is not one this page carries`;
  if (suite.capabilities.cameras.length === 0) return `suite '${plan.suite}' renders no camera`;
  if (plan.plugins && plan.plugins.length > 0)
    return "the run loaded plugin files, which this page does not carry";
  if (Object.keys(plan.calibration).length > 0)
    return "the run was scored by calibration files, which this page does not carry";
  return null;
}

/** The policy's place in an arm's begin: a replay never asks it anything. */
function absentPolicy(suite: Suite): PolicyInstance {
  const refuse = () => {
    throw new Error("a replay of recorded actions consults no policy");
  };
  return {
    capabilities: {
      cameras: [],
      readsState: false,
      readsContext: false,
      privileged: false,
      actionDim: suite.actionSpace.dim,
      chunk: 1,
      differentiable: false,
      weights: false,
      stochastic: false,
      actionHead: "unknown",
    },
    reset: refuse,
    act: refuse,
    close: () => undefined,
  };
}

export interface ActionReplay {
  plan: PlanSpec;
  suite: Suite;
  /** Opened with every camera of the suite. */
  instance: SuiteInstance;
  episode: RecordedEpisode;
  /** The episode's recorded steps, in order. */
  steps: readonly TrajectoryStepFile[];
  /** Each camera's image before step `step`'s action (read during that step: images are lazy). */
  onFrame(camera: string, step: number, image: Image): void | Promise<void>;
}

/** Replays one episode from its recorded actions; returns its frames index. */
export async function replayActions(r: ActionReplay): Promise<FramesIndex> {
  const { plan, suite, instance, episode } = r;
  const task = suite.tasks().find((t) => t.id === episode.task);
  if (!task) throw new Error(`suite '${suite.id}' has no task '${episode.task}'`);
  const cell: Cell = {
    id: episode.cell,
    task: episode.task,
    arm: episode.arm,
    seed: episode.seed,
    repeat: episode.repeat,
    ...(episode.defenses ? { defenses: episode.defenses } : {}),
  };
  const policy = absentPolicy(suite);
  // The arm's scene edits, drawn as the run drew them (its generator, seeded by the cell).
  let edits: SceneEdit[] = [];
  if (episode.perturbed.scene) {
    const hooks = await beginArm(cell, {
      attack: attacks.get(cell.arm),
      attackParams: plan.attack_params,
      task,
      suite: { id: suite.id, capabilities: suite.capabilities, actionSpace: suite.actionSpace },
      policy,
    });
    edits = hooks.scene?.() ?? [];
  }
  const timeline: TimelineStep[] = [];
  let current = -1;
  const predicates = predicatesFor(suite, task.id, {}).map(timelineWatch(timeline, () => current));
  const replayed = emptyRecord(cell, episode.scene, task.instruction);
  const judge = new EpisodeSteps(replayed, predicates, {}, policy, suite.actionSpace.dim);
  const instruction = episode.instruction.received ?? episode.instruction.original;
  const cameras = suite.capabilities.cameras;
  const shown: number[] = [];
  let size: { width: number; height: number } | null = null;
  const poseGaps: string[] = [];
  let result = await instance.reset({
    task: cell.task,
    scene: episode.scene,
    seed: cell.seed,
    ...(edits.length > 0 ? { edits } : {}),
  });
  for (const recorded of r.steps) {
    const step = recorded.step;
    current = step;
    let all = true;
    for (const camera of cameras) {
      const image = result.obs.images[camera];
      if (!image || image.width === 0 || image.height === 0) {
        all = false;
        continue;
      }
      size ??= { width: image.width, height: image.height };
      await r.onFrame(camera, step, image);
    }
    if (all) shown.push(step);
    const action = Float32Array.from(recorded.action);
    result = await instance.step(action);
    const seen = { instruction } as Observation;
    judge.judge(step, seen, action, result.state, result.taskSuccess);
    const pose = result.state.eefPos ? Array.from(result.state.eefPos) : null;
    const gap =
      pose && recorded.pose
        ? Math.max(...pose.map((v, i) => Math.abs(v - (recorded.pose?.[i] ?? Number.NaN))))
        : pose === recorded.pose
          ? 0
          : Number.POSITIVE_INFINITY;
    if (!(gap <= POSE_TOLERANCE) && poseGaps.length === 0)
      poseGaps.push(
        `end-effector at step ${step}: ${Number.isFinite(gap) ? `${gap.toExponential(2)} m` : "missing"} from the recorded position`,
      );
  }
  judge.finish();
  const diffs = [...differences(episode, replayed), ...poseGaps];
  const sized = size as { width: number; height: number } | null;
  return {
    format: FRAMES_FORMAT,
    cell: cell.id,
    source: "replay",
    cameras: [...cameras].sort(),
    steps: shown,
    width: sized?.width ?? null,
    height: sized?.height ?? null,
    timeline,
    reproduced: { matches: diffs.length === 0, differences: diffs },
  };
}
