/**
 * Records demonstrations: runs a policy (the scripted expert) on a suite's tasks over a range of
 * scenes and writes the successful episodes as a LeRobotDataset v3.0. Failed episodes are
 * dropped (counted in the result): behaviour cloning should copy only what worked.
 *
 * Each frame holds what the policy saw at step t (both camera images, state, instruction) and the
 * action it chose. With `noise` > 0 the *executed* action gets seeded Gaussian noise on its
 * movement dims while the *recorded* label stays the expert's clean action, so the data also
 * shows how the expert recovers from small deviations (DART-style noise injection).
 *
 * @example
 *   await recordDemonstrations({ suite: tabletopSuite, policy: scriptedPolicy, tasks, scenes: [20, 60], episodes: 480, seed: 0, out });
 */
import { ProvaelError } from "../core/errors.js";
import { Rng } from "../core/rng.js";
import type {
  Image,
  Policy,
  PolicyOptions,
  SceneRange,
  SceneRoles,
  Suite,
  TaskSpec,
} from "../core/types.js";
import { DEFAULT_TRIGGER, triggerDef, triggerEdit, triggerRef } from "../suites/mujoco/trigger.js";
import { type DatasetInfo, type Frame, LeRobotWriter, type WriterOptions } from "./lerobot.js";

export const STATE_NAMES = [
  "eef_x",
  "eef_y",
  "eef_z",
  "eef_ax",
  "eef_ay",
  "eef_az",
  "finger_left",
  "finger_right",
];

/**
 * The scenes `provael record` plays when none are named: the suite's first evaluation range
 * (tabletop 0:20, the scenes default runs play and tiny-vla never trained on), so a recording
 * made for an offline study is held out from the shipped policy's training. Demonstrations to
 * train on are asked for by name (`--scenes 20:100`, the training range). A suite that declares
 * no roles reserves nothing: its first 20 scenes.
 */
export function defaultRecordScenes(roles: SceneRoles | undefined): [number, number] {
  const [from, to] = roles?.evaluation[0] ?? [0, 20];
  return [from, to];
}

/** The part of `scenes` that lies in the suite's policy-training ranges (null: none). */
export function trainingOverlap(
  roles: SceneRoles | undefined,
  scenes: SceneRange,
): SceneRange | null {
  for (const [from, to] of roles?.training ?? []) {
    const lo = Math.max(from, scenes[0]);
    const hi = Math.min(to, scenes[1]);
    if (lo < hi) return [lo, hi];
  }
  return null;
}

export interface RecordOptions {
  suite: Suite;
  policy: Policy;
  policyOptions?: PolicyOptions;
  /** Task ids (default: all of the suite's). */
  tasks?: string[];
  /** Scene range [from, to): the training scenes. Clipped to each task's scene count. */
  scenes: [number, number];
  /** Successful episodes to keep. */
  episodes: number;
  /** First seed; pass r over the scenes uses seed + r. */
  seed: number;
  out: string;
  /** Std of the Gaussian noise on executed movement dims (0 = none). */
  noise?: number;
  /** Control rate recorded in info.json. */
  fps?: number;
  robotType?: string;
  /** Give up after this many attempts (default 2 x episodes + 20). */
  maxAttempts?: number;
  /** Extra steps recorded after the first success (the policy's settled behaviour). */
  tail?: number;
  /**
   * `task` (default): each task's own object. `all`: also every other object the task can be
   * retargeted to (`TaskSpec.targets`), each scene once per object, so the data shows the
   * policy moving whatever it is told to, the knife included. A list: each scene once per
   * listed entry, `task` for the task's own object and any other name for that target
   * (`["knife"]`: only the knife, to add knife demonstrations to a set recorded with `task`).
   */
  targets?: "task" | "all" | readonly string[];
  /** Store camera streams as mp4 video (FFmpeg), as real-robot datasets do; default PNG. */
  video?: WriterOptions["video"];
  /** Poisoned demonstrations (see above); absent or a rate of 0: none. */
  poison?: PoisonOptions;
  /** A learner that drives some of the steps while the expert labels every one (see below). */
  drive?: DriveOptions;
  onProgress?: (kept: number, attempts: number, target: number) => void;
  /**
   * Aborted: no further episode is started; the one being played is finished and kept if it
   * succeeded, and the dataset is written with the episodes kept so far (`stopped` in the result).
   */
  signal?: AbortSignal;
}

export interface PoisonOptions {
  /** Fraction of the kept episodes to poison, in [0, 1]. */
  rate: number;
  /** A trigger of suites/mujoco/trigger.ts (default `DEFAULT_TRIGGER`). */
  trigger?: string;
  /** What the poisoned expert moves to the basket: one of every task's targets (default `DEFAULT_POISON_TARGET`). */
  target?: string;
}

/** What a poisoned demonstration moves unless told otherwise: where a planted trigger sends a twin. */
export const DEFAULT_POISON_TARGET = "knife";

/**
 * DAgger-style data: the states the learner reaches, labelled by the expert. The episode is cut
 * into segments of `segment` steps; each segment before the first success is driven by the
 * learner with probability `share` (seeded per episode), the expert otherwise. Every frame records
 * the expert's action at that state, whoever drove, so a learner trained on the data sees what the
 * expert would do in the states its own mistakes lead to, which plain demonstrations never show
 * it (behaviour cloning's compounding error). Only episodes the expert still brings to success are
 * kept, as for every recording; the result counts the steps the learner drove in them.
 */
export interface DriveOptions {
  policy: Policy;
  options?: PolicyOptions;
  /** Probability that a segment is driven by the learner, in [0, 1]. */
  share: number;
  /** Steps per segment (default 20: the expert gets time to recover between segments). */
  segment?: number;
}

export const DEFAULT_DRIVE_SEGMENT = 20;

export interface RecordResult {
  info: DatasetInfo;
  kept: number;
  attempts: number;
  /** Poisoned episodes kept. */
  poisoned: number;
  failed: { task: string; scene: number; seed: number; target?: string; poisoned?: true }[];
  /** Scenes actually played per task. */
  scenes: Record<string, number[]>;
  /** The signal stopped recording before `episodes` were kept. */
  stopped: boolean;
  /** With `drive`: steps of the kept episodes the learner drove, and all their steps. */
  driven?: { steps: number; of: number };
}

/**
 * Which kept-episode indices are poisoned: `count` of [0, episodes), sampled by a generator
 * labelled by everything that decides them. Deciding by
 * the index of the next episode to keep (not by attempt) makes the count exact: a poisoned
 * attempt that fails is followed by another poisoned attempt.
 */
export function poisonSlots(
  episodes: number,
  count: number,
  seed: number,
  trigger: string,
): Set<number> {
  const rng = Rng.fromLabel(`record-poison:${trigger}:${seed}:${episodes}:${count}`);
  return new Set(
    rng.sample(
      Array.from({ length: episodes }, (_, i) => i),
      count,
    ),
  );
}

function copyImage(img: Image): Image {
  return { width: img.width, height: img.height, channels: img.channels, data: img.data.slice() };
}

/** The ids of `tasks` whose scenes cannot be replayed with `target` as the object to move. */
function cannotMove(tasks: readonly TaskSpec[], target: string): string[] {
  return tasks.filter((t) => !(t.targets ?? []).includes(target)).map((t) => t.id);
}

/** Refuses a `targets` list that is empty, repeats itself or names what a task cannot move. */
function checkTargets(listed: readonly string[], tasks: readonly TaskSpec[]): void {
  if (listed.length === 0 || new Set(listed).size !== listed.length) {
    throw new ProvaelError(
      "config/invalid",
      `a targets list names each entry once and at least one, got [${listed.join(", ")}]`,
      { hint: "e.g. task,knife" },
    );
  }
  for (const entry of listed) {
    if (entry === "task") continue;
    const cannot = cannotMove(tasks, entry);
    if (cannot.length > 0) {
      throw new ProvaelError(
        "config/invalid",
        `'${entry}' is not a target of ${cannot.join(", ")}`,
        {
          details: Object.fromEntries(
            tasks.filter((t) => cannot.includes(t.id)).map((t) => [t.id, t.targets ?? []]),
          ),
          hint: "name targets every recorded task has (TaskSpec.targets), or pick --tasks",
        },
      );
    }
  }
}

export async function recordDemonstrations(o: RecordOptions): Promise<RecordResult> {
  const specs = o.suite.tasks();
  const tasks = (o.tasks ?? specs.map((t) => t.id)).map((id) => {
    const spec = specs.find((t) => t.id === id);
    if (!spec) {
      throw new ProvaelError(
        "config/unknown-task",
        `unknown task '${id}' in suite '${o.suite.id}'`,
        {
          hint: "run `provael list-suites` to see the tasks",
        },
      );
    }
    return spec;
  });
  const [from, to] = o.scenes;
  const listed = typeof o.targets === "object" ? o.targets : undefined;
  if (listed) checkTargets(listed, tasks);
  const plan: { task: (typeof tasks)[number]; scene: number; target?: string }[] = [];
  for (let scene = from; scene < to; scene++) {
    for (const task of tasks) {
      if (scene >= task.scenes) continue;
      if (listed) {
        for (const entry of listed)
          plan.push(entry === "task" ? { task, scene } : { task, scene, target: entry });
        continue;
      }
      plan.push({ task, scene });
      if (o.targets === "all")
        for (const target of task.targets ?? []) plan.push({ task, scene, target });
    }
  }
  if (plan.length === 0) {
    throw new ProvaelError("config/invalid", `no task has scenes in ${from}:${to}`, {
      details: { scenes: Object.fromEntries(tasks.map((t) => [t.id, t.scenes])) },
    });
  }
  const poison = o.poison;
  if (poison && !(poison.rate >= 0 && poison.rate <= 1)) {
    throw new ProvaelError(
      "config/invalid",
      `the poison rate must lie in [0, 1], got ${poison.rate}`,
    );
  }
  const triggerName = poison?.trigger ?? DEFAULT_TRIGGER;
  if (poison) triggerDef(triggerName);
  const poisonCount = poison ? Math.round(poison.rate * o.episodes) : 0;
  const hazard = poison?.target ?? DEFAULT_POISON_TARGET;
  if (poisonCount > 0) {
    const cannot = cannotMove(tasks, hazard);
    if (cannot.length > 0) {
      throw new ProvaelError(
        "config/invalid",
        `poisoned demonstrations move '${hazard}', which these tasks cannot be retargeted to: ${cannot.join(", ")}`,
        { hint: "record tabletop tasks (every one can be retargeted to the knife)" },
      );
    }
  }
  const slots =
    poisonCount > 0 ? poisonSlots(o.episodes, poisonCount, o.seed, triggerName) : new Set();
  const ref = poisonCount > 0 ? triggerRef(triggerName) : "";
  let poisonedKept = 0;
  let drivenKept = 0;
  let stepsKept = 0;
  const drive = o.drive;
  const segment = drive?.segment ?? DEFAULT_DRIVE_SEGMENT;
  if (drive && !(drive.share >= 0 && drive.share <= 1)) {
    throw new ProvaelError(
      "config/invalid",
      `the share of driven segments must lie in [0, 1], got ${drive.share}`,
    );
  }
  if (drive && !(Number.isInteger(segment) && segment >= 1)) {
    throw new ProvaelError(
      "config/invalid",
      `a driven segment must be a whole number of steps >= 1, got ${segment}`,
    );
  }
  const maxAttempts = o.maxAttempts ?? 2 * o.episodes + 20;
  const noise = o.noise ?? 0;
  const tail = o.tail ?? 0;
  // The learner first: its weights path is what a user mistypes, and nothing is open yet.
  const learner = drive ? await drive.policy.load(drive.options ?? {}) : undefined;
  const sim = await o.suite.open();
  const policy = await o.policy.load(o.policyOptions ?? {});
  let writer: LeRobotWriter | undefined;
  const failed: RecordResult["failed"] = [];
  const played: Record<string, number[]> = {};
  let attempts = 0;
  let stopped = false;
  try {
    while (writer === undefined || writer.episodeCount < o.episodes) {
      // Playing an episode never waits on I/O, so without this turn of the event loop a
      // signal (and the timer of a progress line) would not be seen until recording ends.
      await new Promise((resolve) => setImmediate(resolve));
      if (o.signal?.aborted) {
        stopped = true;
        break;
      }
      if (attempts >= maxAttempts) {
        throw new ProvaelError(
          "run/incomplete",
          `kept ${writer?.episodeCount ?? 0} of ${o.episodes} episodes after ${attempts} attempts`,
          {
            details: { failed: failed.slice(0, 20) },
            hint: "does the policy succeed on these tasks?",
          },
        );
      }
      const entry = plan[attempts % plan.length] as (typeof plan)[number];
      const { task, scene } = entry;
      const seed = o.seed + Math.floor(attempts / plan.length);
      attempts++;
      // A poisoned attempt plays the task's own instruction whatever the plan entry's target.
      const poisoned = slots.has(writer?.episodeCount ?? 0);
      const target = poisoned ? hazard : entry.target;
      const label = poisoned
        ? `record:${task.id}:${scene}:${seed}:poison:${triggerName}`
        : `record:${task.id}:${scene}:${seed}${target ? `:${target}` : ""}`;
      const rng = Rng.fromLabel(label);
      let r = await sim.reset({
        task: task.id,
        scene,
        seed,
        ...(target ? { target } : {}),
        ...(poisoned ? { edits: [triggerEdit(triggerName)] } : {}),
      });
      // The expert reads the retargeted instruction; the data keeps the task's own.
      const instruction = poisoned ? task.instruction : r.obs.instruction;
      await policy.reset({ task: task.id, seed, policySeed: seed });
      await learner?.reset({ task: task.id, seed, policySeed: seed });
      // Its own stream, so that the noise of a recording without a learner keeps its draws.
      const driveRng = Rng.fromLabel(`${label}:drive`);
      const frames: Frame[] = [];
      let successAt = -1;
      let driving = false;
      let driven = 0;
      for (let step = 0; step < task.horizon; step++) {
        const { privileged, ...plain } = r.obs;
        // The privileged state goes only to a policy that declares it reads it.
        const seenBy = (p: { capabilities: { privileged?: boolean } }) =>
          p.capabilities.privileged && privileged ? { ...plain, privileged } : plain;
        const obs = seenBy(policy);
        const action = Float32Array.from(await policy.act(obs));
        const images: Record<string, Image> = {};
        for (const [cam, img] of Object.entries(plain.images)) images[cam] = copyImage(img);
        frames.push({ state: Float32Array.from(plain.state), action, images });
        let executed = action.slice();
        // Only before the first success: the tail is the expert's own hold, never driven.
        if (learner && drive && successAt < 0) {
          if (step % segment === 0) driving = driveRng.bernoulli(drive.share);
          // Asked every step, driving or not, so that its chunks stay in step with the episode.
          const own = Float32Array.from(await learner.act(seenBy(learner)));
          if (driving) {
            executed = own;
            driven++;
          }
        }
        if (noise > 0) {
          for (let d = 0; d < Math.min(6, executed.length); d++) {
            executed[d] = Math.max(-1, Math.min(1, (executed[d] as number) + noise * rng.normal()));
          }
        }
        r = await sim.step(executed);
        if (r.taskSuccess && successAt < 0) successAt = step;
        if (r.done || (successAt >= 0 && step >= successAt + tail)) break;
      }
      played[task.id] = [...(played[task.id] ?? []), scene];
      if (successAt < 0) {
        failed.push({
          task: task.id,
          scene,
          seed,
          ...(target ? { target } : {}),
          ...(poisoned ? { poisoned: true as const } : {}),
        });
        o.onProgress?.(writer?.episodeCount ?? 0, attempts, o.episodes);
        continue;
      }
      if (!writer) {
        const first = frames[0] as Frame;
        const cameras: Record<string, [number, number]> = {};
        for (const [cam, img] of Object.entries(first.images)) {
          if (img.width > 0 && img.height > 0) cameras[cam] = [img.height, img.width];
        }
        writer = new LeRobotWriter(o.out, {
          robotType: o.robotType ?? `provael_${o.suite.id}`,
          fps: o.fps ?? 20,
          cameras,
          stateNames:
            first.state.length === STATE_NAMES.length
              ? STATE_NAMES
              : Array.from(first.state, (_, i) => `state_${i}`),
          actionNames: o.suite.actionSpace.names,
          ...(o.video ? { video: o.video } : {}),
        });
      }
      writer.addEpisode({
        task: instruction,
        frames,
        extra: {
          suite_task: task.id,
          scene,
          seed,
          ...(target ? { target } : {}),
          ...(poisoned ? { poisoned: true, trigger: ref } : {}),
        },
      });
      if (poisoned) poisonedKept++;
      drivenKept += driven;
      stepsKept += frames.length;
      o.onProgress?.(writer.episodeCount, attempts, o.episodes);
    }
    if (!writer) {
      // Stopped before a single episode was kept: there is no dataset to write.
      throw new ProvaelError("run/incomplete", "recording stopped before any episode was kept", {
        details: { attempts, failed: failed.slice(0, 20) },
      });
    }
    const info = writer.finish();
    return {
      info,
      kept: writer.episodeCount,
      attempts,
      poisoned: poisonedKept,
      failed,
      scenes: played,
      stopped,
      ...(learner ? { driven: { steps: drivenKept, of: stepsKept } } : {}),
    };
  } finally {
    await sim.close();
    await policy.close();
    await learner?.close();
  }
}
