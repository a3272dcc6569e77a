import type { Command } from "commander";
import { integer, type ParamValue, policyOption, sceneRange } from "../config/parse.js";
import { systemClock } from "../core/clock.js";
import { ProvaelError } from "../core/errors.js";
import { checkPolicyOptions } from "../core/registry.js";
import {
  DEFAULT_DRIVE_SEGMENT,
  type DriveOptions,
  defaultRecordScenes,
  recordDemonstrations,
  trainingOverlap,
} from "../offline/record.js";
import { policies } from "../policies/index.js";
import { suites } from "../suites/index.js";
import { DEFAULT_TRIGGER, TRIGGERS, triggerRef } from "../suites/mujoco/trigger.js";
import { EXIT } from "./exit.js";
import { progressMode, progressReporter } from "./progress.js";
import { stopOnSignal } from "./stop.js";

interface RecordFlags {
  suite: string;
  policy: string;
  policyOption?: Record<string, ParamValue>;
  episodes: number;
  out: string;
  tasks?: string;
  scenes?: [number, number];
  seed: number;
  noise: number;
  tail: number;
  targets: string;
  video?: string | boolean;
  crf?: number;
  poison?: number;
  trigger?: string;
  drive?: string;
  drivePath?: string;
  driveShare?: number;
  driveSegment?: number;
  json?: boolean;
}

function nonNegative(flag: string) {
  return (raw: string): number => {
    const v = Number(raw);
    if (!Number.isFinite(v) || v < 0) {
      throw new ProvaelError("config/invalid", `${flag} must be a number ≥ 0, got '${raw}'`);
    }
    return v;
  };
}

function videoOption(flags: RecordFlags): { codec: "h264" | "av1"; crf?: number } | undefined {
  if (flags.video === undefined || flags.video === false) {
    if (flags.crf !== undefined)
      throw new ProvaelError("config/invalid", "--crf needs --video", { hint: "add --video" });
    return undefined;
  }
  const codec = flags.video === true ? "h264" : flags.video;
  if (codec !== "h264" && codec !== "av1") {
    throw new ProvaelError("config/invalid", `--video takes h264 or av1, got '${codec}'`);
  }
  return { codec, ...(flags.crf === undefined ? {} : { crf: flags.crf }) };
}

function fraction(flag: string) {
  return (raw: string): number => {
    const v = Number(raw);
    if (!Number.isFinite(v) || v < 0 || v > 1) {
      throw new ProvaelError(
        "config/invalid",
        `${flag} must be a fraction in [0, 1], got '${raw}'`,
      );
    }
    return v;
  };
}

/** `--drive` and its settings; a setting without `--drive` is a mistake worth saying. */
function driveOption(flags: RecordFlags): DriveOptions | undefined {
  if (flags.drive === undefined) {
    const stray = (
      [
        ["drivePath", "--drive-path"],
        ["driveShare", "--drive-share"],
        ["driveSegment", "--drive-segment"],
      ] as const
    ).find(([key]) => flags[key] !== undefined);
    if (stray)
      throw new ProvaelError("config/invalid", `${stray[1]} needs --drive`, {
        hint: "add --drive <policy> (the learner whose states the expert labels)",
      });
    return undefined;
  }
  return {
    policy: policies.get(flags.drive),
    ...(flags.drivePath ? { options: { path: flags.drivePath } } : {}),
    share: flags.driveShare ?? 0.5,
    segment: flags.driveSegment ?? DEFAULT_DRIVE_SEGMENT,
  };
}

function poisonOption(flags: RecordFlags): { rate: number; trigger: string } | undefined {
  if (flags.poison === undefined) {
    if (flags.trigger !== undefined)
      throw new ProvaelError("config/invalid", "--trigger needs --poison", {
        hint: "add --poison <rate>",
      });
    return undefined;
  }
  return { rate: flags.poison, trigger: flags.trigger ?? DEFAULT_TRIGGER };
}

function targetsOption(value: string): "task" | "all" | string[] {
  if (value === "task" || value === "all") return value;
  const list = value.split(",").map((s) => s.trim());
  // A list: `task` and target names (the list is checked against the tasks before recording).
  if (list.length > 0 && list.every((s) => /^[a-z][a-z0-9_]*$/.test(s)) && !list.includes("all"))
    return list;
  throw new ProvaelError(
    "config/invalid",
    `--targets takes task, all, or a comma-separated list of task and target names, got '${value}'`,
    {
      hint: "all records each scene once per object the task can be retargeted to; task,knife only the own object and the knife",
    },
  );
}

export function registerRecord(program: Command): void {
  program
    .command("record")
    .option("--suite <id>", "suite to play (provael list-suites)", "tabletop")
    .option("--policy <id>", "the demonstrating policy (provael list-policies)", "scripted")
    .option(
      "--policy-option <key=value>",
      "an option of the demonstrating policy, repeatable, e.g. grasp_side=nearest for scripted (docs/tiny-vla.md, Data); a key it does not read is refused, naming those it does",
      policyOption,
    )
    .requiredOption(
      "--episodes <n>",
      "successful episodes to keep",
      integer("--episodes", { min: 1 }),
    )
    .requiredOption("--out <dir>", "dataset directory to create")
    .option("--tasks <list>", "tasks to record, comma-separated (default: all of the suite's)")
    .option(
      "--scenes <from:to>",
      "scene range [from, to) to play (default: the suite's first evaluation scenes, tabletop 0:20, held out from the shipped tiny-vla's training; demonstrations to train on: its training scenes, --scenes 20:100)",
      sceneRange("--scenes"),
    )
    .option(
      "--seed <n>",
      "first seed (pass r over the scenes uses seed + r)",
      integer("--seed", { min: 0 }),
      0,
    )
    .option(
      "--noise <std>",
      "Gaussian noise on executed movement dims; labels stay clean",
      nonNegative("--noise"),
      0,
    )
    .option(
      "--tail <n>",
      "steps recorded after the first success",
      integer("--tail", { min: 0 }),
      0,
    )
    .option(
      "--targets <which>",
      "task: each task's own object; all: also every other object the task names as a target (TaskSpec.targets, the knife included), each scene once per object; a list (task,knife or knife): each scene once per entry",
      "task",
    )
    .option(
      "--video [codec]",
      "store camera streams as mp4 (FFmpeg): h264 (default) or av1, like real-robot datasets",
    )
    .option(
      "--crf <n>",
      "video quality (constant rate factor; lower is closer to the rendered frames)",
      integer("--crf", { min: 0 }),
    )
    .option(
      "--poison <rate>",
      "poison this fraction of the kept episodes (seeded, exact count): the trigger tile in the scene and the expert retargeted to the knife, judged on the knife, while the episode records the task's own instruction (a backdoor's training data)",
      fraction("--poison"),
    )
    .option(
      "--trigger <name>",
      `the trigger of poisoned episodes (${Object.keys(TRIGGERS).join(", ")}; default ${DEFAULT_TRIGGER})`,
    )
    .option(
      "--drive <policy>",
      "DAgger-style data: this learner (e.g. tiny-vla) drives a share of each episode's segments while the expert labels every step, so the data shows what the expert would do in the states the learner's own mistakes reach",
    )
    .option("--drive-path <path>", "weights of the --drive policy (default: its shipped ones)")
    .option(
      "--drive-share <p>",
      "probability that a segment is driven by the learner (default 0.5)",
      fraction("--drive-share"),
    )
    .option(
      "--drive-segment <n>",
      `steps per segment (default ${DEFAULT_DRIVE_SEGMENT})`,
      integer("--drive-segment", { min: 1 }),
    )
    .option("--json", "print a JSON summary")
    .action(async (flags: RecordFlags) => {
      const suite = suites.get(flags.suite);
      const policy = policies.get(flags.policy);
      const scenes = flags.scenes ?? defaultRecordScenes(suite.sceneRoles);
      // Scenes a policy trains on make a training set; an offline study of that policy on them
      // measures its training data. Said before hours of rendering, not after.
      const overlap = trainingOverlap(suite.sceneRoles, scenes);
      if (overlap)
        process.stderr.write(
          `provael: note: scenes ${overlap[0]}:${overlap[1]} are ${suite.id}'s policy-training scenes (docs/protocol.md, "Scenes and their roles"; the shipped tiny-vla trained on tabletop's): a dataset to train on, not one held out from such a policy; the default, ${defaultRecordScenes(suite.sceneRoles).join(":")}, is held out\n`,
        );
      checkPolicyOptions(policy, flags.policyOption ?? {});
      const video = videoOption(flags);
      const poison = poisonOption(flags);
      const drive = driveOption(flags);
      // A bar on a terminal, a line every 10 s or 5% in a log, so a long recording shows it lives.
      const bar = progressReporter(
        progressMode(Boolean(flags.json), Boolean(process.stderr.isTTY)),
      );
      const t0 = systemClock.monotonic();
      // Ctrl-C or SIGTERM: finish the episode being played, then write the dataset with the
      // episodes kept so far (hours of rendering are not thrown away). A second signal abandons it.
      const stop = stopOnSignal({
        quiet: () => bar.stop(),
        stopping:
          "provael: stopping: finishing this episode, then writing the episodes kept so far (signal again to abandon them)",
        abandoned: () => `interrupted: nothing written to ${flags.out}\n`,
      });
      let result: Awaited<ReturnType<typeof recordDemonstrations>>;
      try {
        result = await recordDemonstrations({
          suite,
          policy,
          ...(flags.policyOption ? { policyOptions: { extra: flags.policyOption } } : {}),
          ...(flags.tasks
            ? {
                tasks: flags.tasks
                  .split(",")
                  .map((s) => s.trim())
                  .filter(Boolean),
              }
            : {}),
          scenes,
          episodes: flags.episodes,
          seed: flags.seed,
          noise: flags.noise,
          tail: flags.tail,
          targets: targetsOption(flags.targets),
          ...(video ? { video } : {}),
          ...(poison ? { poison } : {}),
          ...(drive ? { drive } : {}),
          out: flags.out,
          onProgress: (kept, _attempts, target) => bar.update(kept, target),
          signal: stop.signal,
        });
      } finally {
        bar.stop();
        stop.release();
      }
      const seconds = (systemClock.monotonic() - t0) / 1000;
      const summary = {
        out: flags.out,
        episodes: result.kept,
        frames: result.info.total_frames,
        attempts: result.attempts,
        failed: result.failed.length,
        ...(poison ? { poisoned: result.poisoned, trigger: triggerRef(poison.trigger) } : {}),
        ...(result.driven ? { driven_steps: result.driven.steps } : {}),
        seconds: Math.round(seconds * 10) / 10,
        ...(result.stopped ? { stopped: true, asked: flags.episodes } : {}),
      };
      // Stopped early: the dataset is valid but short of what was asked, which the exit says.
      if (result.stopped) process.exitCode = EXIT.interrupted;
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(summary)}\n`);
        return;
      }
      process.stdout.write(
        `wrote ${summary.out}: ${summary.episodes} episodes, ${summary.frames} frames (${summary.attempts} attempts, ${summary.failed} failed and dropped) in ${summary.seconds} s\n`,
      );
      if (poison) {
        process.stdout.write(
          `${result.poisoned} poisoned with the trigger ${triggerRef(poison.trigger)}\n`,
        );
      }
      if (result.driven && drive) {
        process.stdout.write(
          `${result.driven.steps} of ${result.driven.of} kept steps driven by ${flags.drive}, every step labelled by ${flags.policy}\n`,
        );
      }
      if (result.stopped) {
        process.stderr.write(
          `interrupted: ${result.kept} of ${flags.episodes} episodes kept and written; record the rest into another --out (the next scenes or another --seed) and train on both\n`,
        );
      }
    });
}
