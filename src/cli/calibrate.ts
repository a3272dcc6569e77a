import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline/promises";
import type { Command } from "commander";
import { BUILTIN_PROFILES, loadProfile, profileHazardPosition } from "../bridge/profile.js";
import { integer, list } from "../config/parse.js";
import { canonicalJson } from "../core/canonical-json.js";
import { systemClock } from "../core/clock.js";
import { sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import { TOOL_VERSION } from "../core/package-root.js";
import type { Vec3 } from "../core/types.js";
import { envelopeMonitorParams } from "../defenses/monitor.js";
import {
  type BenignEpisode,
  type Calibration,
  calibrationRange,
  fitCalibration,
  SPLIT_RULE,
  SPLITS,
  type SplitName,
  splitCounts,
  splitNeeds,
  splitOfScene,
} from "../judges/calibrate.js";
import { pct, textTable } from "../report/format.js";
import { RUN_FILES } from "../rundir/files.js";
import { type JournalEntry, readTrajectory, scanJournal } from "../rundir/journal.js";
import { readBenignRun } from "../runner/benign-run.js";
import { CALIBRATION_SUFFIX, calibrationsIn } from "../runner/calibration.js";
import {
  type CalibrationPlan,
  CONFIRM_ABOVE_EPISODES,
  calibrationSummary,
  checkCalibrationPlan,
  planCalibration,
} from "../runner/calibration-plan.js";
import { defaultWorkers } from "../runner/executor.js";
import { writeFileAtomic } from "../runner/files.js";
import type { Waiver } from "../runner/plan.js";
import { runAttack } from "../runner/run.js";
import { suites } from "../suites/index.js";
import { EXIT } from "./exit.js";
import { progressMode, progressReporter } from "./progress.js";

interface CalibrateFlags {
  policy?: string;
  suite?: string;
  tasks?: string[];
  seeds?: number;
  seed?: number;
  horizon?: number;
  targetFpr: string;
  out?: string;
  concurrency: number;
  workers?: number;
  policyPath?: string;
  from?: string;
  profile?: string;
  allowTrainingScenes?: boolean;
  json?: boolean;
  dryRun?: boolean;
  yes?: boolean;
}

export function registerCalibrate(program: Command): void {
  program
    .command("calibrate")
    .option("--policy <id>", "policy to calibrate for (not with --from)")
    .option("--suite <id>", "suite (not with --from)")
    .option("--tasks <list>", "tasks (default: all)", list)
    .option(
      "--seeds <n>",
      "benign seeds per task, split by scene into fit, threshold and evaluate (default: the fewest the target needs)",
      integer("--seeds", { min: 1 }),
    )
    .option(
      "--seed <n>",
      "first seed (default: the suite's first calibration scene, 1000 on the MuJoCo suites)",
      integer("--seed", { min: 0 }),
    )
    .option(
      "--horizon <n>",
      "steps per episode (default: each task's)",
      integer("--horizon", { min: 1 }),
    )
    .option(
      "--target-fpr <p>",
      "benign false-positive rate the zone is set for (conformal bound on the threshold split)",
      "0.01",
    )
    .option("--concurrency <n>", "episodes in flight", integer("--concurrency", { min: 1 }), 1)
    .option(
      "--workers <n>",
      "worker threads (default: every core)",
      integer("--workers", { min: 1 }),
    )
    .option("--policy-path <path>", "weights for the policy")
    .option(
      "--from <dir>",
      "fit from a finished benign run directory (its baseline episodes; e.g. one written by `provael bridge`) instead of playing",
    )
    .option(
      "--profile <name|file>",
      "with --from: the benchmark profile whose per-task hazard positions the zones guard (bridge runs)",
    )
    .option(
      "--allow-training-scenes",
      "play scenes the policy was trained on (recorded in the rollouts' report)",
    )
    .option(
      "--out <dir>",
      "directory for <task>.calibration.json files (and the benign rollouts); required unless --dry-run",
    )
    .option("--json", "print JSON")
    .option(
      "--dry-run",
      "print what would be played (tasks, seeds, episodes, estimated time) and what would be refused; play nothing",
    )
    .option(
      "--yes",
      `play without asking when the calibration is over ${CONFIRM_ABOVE_EPISODES.toLocaleString("en-US")} episodes (a terminal is asked; anything else is refused without --yes)`,
    )
    .action(async (flags: CalibrateFlags) => {
      const target = Number(flags.targetFpr);
      if (!(target > 0 && target < 1)) {
        throw new ProvaelError(
          "config/invalid",
          `--target-fpr must be a number in (0, 1), got '${flags.targetFpr}'`,
        );
      }
      if (flags.dryRun) {
        dryRun(flags, target);
        return;
      }
      if (flags.out === undefined) {
        throw new ProvaelError("config/invalid", "calibrate needs --out DIR", {
          hint: "e.g. provael calibrate --policy scripted --suite tabletop --out calib (or --dry-run to see the plan)",
        });
      }
      const outDir = flags.out;
      if (calibrationsIn(outDir)) {
        throw new ProvaelError("run/out-exists", `${outDir} already holds calibration files`, {
          hint: "calibrations are never overwritten: choose another --out",
        });
      }
      const input = flags.from ? fromRun(flags) : await play(flags, target, outDir);
      const written: Calibration[] = [];
      const refused: { task: string; reason: string; hint: string }[] = [];
      mkdirSync(outDir, { recursive: true });
      for (const task of input.tasks) {
        const entries = input.entries.filter((e) => e.record.task === task);
        const ok = entries.filter((e) => e.record.error === null);
        const episodes: BenignEpisode[] = ok.map((e) => {
          const steps = readTrajectory(e);
          return {
            seed: e.record.seed,
            scene: e.record.scene,
            positions: steps.flatMap((s) => (s.pose ? [s.pose as Vec3] : [])),
            steps: steps.map((s) => ({ action: s.action, pose: s.pose })),
          };
        });
        const hazard = input.hazards[task];
        try {
          const c = fitCalibration({
            task,
            suite: input.suite,
            policy: input.policy,
            policyDigest: input.policyDigest,
            toolVersion: TOOL_VERSION,
            targetFpr: target,
            episodes,
            excluded: entries.length - ok.length,
            source: input.source,
            // The envelope is fitted for envelope_monitor as it ships (its own defaults).
            monitor: { patience: MONITOR.patience, stepMetres: MONITOR.step_metres },
            ...(hazard ? { hazardPos: hazard } : {}),
          });
          writeFileAtomic(join(outDir, calibrationFileName(task)), `${canonicalJson(c)}\n`);
          written.push(c);
        } catch (e) {
          if (!(e instanceof ProvaelError) || !e.code.startsWith("calibration/")) throw e;
          refused.push({ task, reason: e.message, hint: e.hint ?? "" });
        }
      }
      if (flags.json) {
        process.stdout.write(
          `${JSON.stringify({ out: outDir, calibrations: written, refused }, null, 2)}\n`,
        );
      } else {
        process.stdout.write(
          `${textTable(
            [
              "task",
              "shape",
              "room (cm)",
              "fit n",
              "threshold n",
              "evaluate n",
              "evaluate FPR [95% Wilson]",
              "envelope false stops [95% Wilson]",
            ],
            written.map((c) => [
              c.task,
              c.shape.id,
              (c.room * 100).toFixed(2),
              String(c.splits.fit.n),
              String(c.splits.threshold.n),
              String(c.splits.evaluate.n),
              `${c.splits.evaluate.false_positives}/${c.splits.evaluate.n} = ${pct(c.splits.evaluate.fpr)} [${pct(c.splits.evaluate.interval.low)}–${pct(c.splits.evaluate.interval.high)}]`,
              c.envelope
                ? `${c.envelope.evaluate.stopped}/${c.envelope.evaluate.n} = ${pct(c.envelope.evaluate.rate)} [${pct(c.envelope.evaluate.interval.low)}–${pct(c.envelope.evaluate.interval.high)}]`
                : "—",
            ]),
          )}\n`,
        );
        for (const r of refused)
          process.stderr.write(`provael: refused: ${r.reason}\n  hint: ${r.hint}\n`);
        process.stdout.write(
          `wrote ${written.length} calibration file(s) to ${outDir} (splits: ${SPLIT_RULE}; threshold by the conformal rank, expected benign FPR ≤ ${target})\n`,
        );
      }
      if (refused.length > 0) process.exitCode = EXIT.usage;
      if (written.length === 0) {
        process.stderr.write(
          `provael: no calibration was written (${input.tasks.length === 0 ? "the run has no benign episode" : "every task was refused"})\n`,
        );
        process.exitCode = EXIT.usage;
      }
    });
}

/**
 * A calibration's file name: the task id, or where it holds what a file name cannot (a
 * benchmark's `suite/instruction with spaces`) a slug of it and a digest; `--calib` reads the
 * task from inside the file.
 */
export function calibrationFileName(task: string): string {
  if (/^[A-Za-z0-9_.-]+$/.test(task)) return `${task}${CALIBRATION_SUFFIX}`;
  const slug = task.replace(/[^A-Za-z0-9_.-]+/g, "_").slice(0, 60);
  return `${slug}-${sha256(task)
    .replace(/^sha256:/, "")
    .slice(0, 8)}${CALIBRATION_SUFFIX}`;
}

/**
 * The smallest false-positive target the held-out split reaches with these episodes per split
 * (one episode's scene decides its split), or null when none does.
 */
export function smallestTarget(have: Record<SplitName, number>): number | null {
  for (let k = have.evaluate; k >= 2; k--) {
    const need = splitNeeds(1 / k);
    if (SPLITS.every((s) => have[s] >= need[s])) return 1 / k;
  }
  return null;
}

/**
 * Refuses, before anything is fitted, a target the run's benign episodes cannot reach in some
 * task, naming the smallest target they do reach. A benchmark with fixed initial states (LIBERO:
 * 50 per task, episode_idx picks one) caps the split sizes whatever the number of episodes.
 */
function checkReachable(
  entries: readonly JournalEntry[],
  tasks: readonly string[],
  target: number,
  dir: string,
): void {
  const need = splitNeeds(target);
  const short: string[] = [];
  let floor: number | null = 0;
  for (const task of tasks) {
    const have: Record<SplitName, number> = { fit: 0, threshold: 0, evaluate: 0 };
    for (const e of entries)
      if (e.record.task === task && e.record.error === null)
        have[splitOfScene(e.record.scene)] += 1;
    if (SPLITS.every((s) => have[s] >= need[s])) continue;
    short.push(`'${task}' (${SPLITS.map((s) => `${s} ${have[s]}`).join(", ")})`);
    const t = smallestTarget(have);
    floor = floor === null || t === null ? null : Math.max(floor, t);
  }
  if (short.length === 0) return;
  throw new ProvaelError(
    "calibration/too-few-scenes",
    `--from ${dir}: a false-positive rate of ${target} needs ${SPLITS.map((s) => `${s} ${need[s]}`).join(", ")} benign episodes per task (${SPLIT_RULE}); ${short.length} task(s) have fewer: ${short.slice(0, 3).join("; ")}${short.length > 3 ? "; …" : ""}`,
    {
      details: { need, tasks: short },
      hint:
        floor === null
          ? "play more benign episodes of these tasks"
          : `these episodes reach --target-fpr ${Number(floor.toFixed(4))} at the lowest; or play more episodes (LIBERO's 50 initial states per task give at most fit 17, threshold 17, evaluate 16: --target-fpr 0.0625)`,
    },
  );
}

/** envelope_monitor's shipped settings: what a calibrated envelope's false stops are measured for. */
const MONITOR = envelopeMonitorParams.parse({});

interface FitSource {
  suite: string;
  policy: string;
  policyDigest: string | null;
  tasks: string[];
  entries: JournalEntry[];
  hazards: Record<string, Vec3 | undefined>;
  source: Calibration["source"];
}

/** Refuses what `play` cannot play: --from and --profile mixed with a policy and a suite. */
function checkPlayFlags(flags: CalibrateFlags): { policy: string; suite: string } {
  if (!flags.policy || !flags.suite) {
    throw new ProvaelError(
      "config/invalid",
      "calibrate needs --policy and --suite (or --from DIR)",
      {
        hint: "e.g. provael calibrate --policy scripted --suite tabletop --out calib",
      },
    );
  }
  if (flags.profile) {
    throw new ProvaelError(
      "config/invalid",
      "--profile goes with --from (a bridge run's hazards)",
      {
        hint: "the suite gives the hazards of the episodes calibrate plays",
      },
    );
  }
  return { policy: flags.policy, suite: flags.suite };
}

function calibrationPlanOf(flags: CalibrateFlags, target: number): CalibrationPlan {
  const { policy, suite } = checkPlayFlags(flags);
  return planCalibration({
    policy,
    suite,
    targetFpr: target,
    ...(flags.tasks ? { tasks: flags.tasks } : {}),
    ...(flags.seeds === undefined ? {} : { seeds: flags.seeds }),
    ...(flags.seed === undefined ? {} : { seed: flags.seed }),
    horizon: flags.horizon ?? null,
    workers: flags.workers ?? defaultWorkers(),
  });
}

/** --dry-run: what would be played and refused, and how long it would take; nothing plays. */
function dryRun(flags: CalibrateFlags, target: number): void {
  if (flags.from) {
    throw new ProvaelError("config/invalid", "--dry-run plans benign rollouts to play", {
      hint: "--from fits from a finished run and plays nothing: run it without --dry-run",
    });
  }
  const plan = calibrationPlanOf(flags, target);
  const ask = plan.episodes > CONFIRM_ABOVE_EPISODES;
  if (flags.json) {
    process.stdout.write(
      `${JSON.stringify({ ...plan, confirm: ask ? `--yes (over ${CONFIRM_ABOVE_EPISODES} episodes)` : null }, null, 2)}\n`,
    );
  } else {
    const lines = [
      `calibrate ${plan.policy} on ${plan.suite} at a false-positive rate of ${plan.targetFpr}: ${calibrationSummary(plan)}`,
      `  per task ${SPLITS.map((s) => `${s} ${plan.need[s]}`).join(", ")} episodes needed (${SPLIT_RULE})`,
      `  estimate: ${plan.estimate.basis}`,
      ...plan.refused.map((r) => `  would refuse ${r.task}: ${r.reason}\n    hint: ${r.hint}`),
      ...(ask
        ? [
            `  over ${CONFIRM_ABOVE_EPISODES.toLocaleString("en-US")} episodes: the real run asks on a terminal, or needs --yes`,
          ]
        : []),
      "(dry run: nothing played)",
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
  }
  if (plan.refused.length > 0) process.exitCode = EXIT.usage;
}

/** Asks before a long calibration: --yes, or "y" on a terminal; refused otherwise. */
async function confirmSize(plan: CalibrationPlan, yes: boolean): Promise<void> {
  if (yes || plan.episodes <= CONFIRM_ABOVE_EPISODES) return;
  const what = calibrationSummary(plan);
  if (!(process.stdin.isTTY && process.stderr.isTTY)) {
    throw new ProvaelError(
      "config/invalid",
      `calibrate would play ${what}; over ${CONFIRM_ABOVE_EPISODES.toLocaleString("en-US")} episodes it asks first`,
      {
        details: { episodes: plan.episodes, seconds: plan.estimate.seconds },
        hint: "pass --yes to play it, or fewer --tasks, or a higher --target-fpr (--dry-run shows the plan)",
      },
    );
  }
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`calibrate: ${what}. Play it? [y/N] `);
    if (!/^y(es)?$/i.test(answer.trim())) {
      throw new ProvaelError("config/invalid", "calibration not started (not confirmed)", {
        hint: "pass --yes to play without asking",
      });
    }
  } finally {
    rl.close();
  }
}

/** Plays the benign rollouts, after checking that every task can be fitted at the target. */
async function play(flags: CalibrateFlags, target: number, outDir: string): Promise<FitSource> {
  const planned = calibrationPlanOf(flags, target);
  checkCalibrationPlan(planned);
  const policy = planned.policy;
  const suiteId = planned.suite;
  const suite = suites.get(suiteId);
  const specs = suite.tasks();
  const { tasks, seeds, first } = planned;
  const needText = SPLITS.map((s) => `${s} ${planned.need[s]}`).join(", ");
  const [, end] = calibrationRange(suite.sceneRoles);
  const out = join(outDir, "rollouts");
  // Plain lines on stderr, JSON or not: stdout carries only the result.
  const say = (line: string) => process.stderr.write(`${line}\n`);
  await confirmSize(planned, Boolean(flags.yes));
  say(
    `calibrate: ${calibrationSummary(planned)}; per task ${SPLITS.map((s) => `${s} ${splitCounts(first, seeds, specs.find((x) => x.id === tasks[0])?.scenes ?? 1)[s]}`).join(", ")} (${needText} needed)`,
  );
  if (suite.sceneRoles && first + seeds > end) {
    say(
      `calibrate: note: seeds past ${end - 1} leave the suite's calibration scenes; attack runs on them will be refused as overlapping`,
    );
  }
  const bar = progressReporter(progressMode(Boolean(flags.json), Boolean(process.stderr.isTTY)));
  const policyOptions = flags.policyPath ? { path: flags.policyPath } : {};
  const waivers: Waiver[] = flags.allowTrainingScenes ? ["training-scenes"] : [];
  const t0 = systemClock.monotonic();
  let estimated = false;
  let startDone = -1;
  let reportDigest: string | null;
  try {
    ({ reportDigest } = await runAttack({
      plan: {
        policy,
        suite: suiteId,
        tasks,
        arms: ["none"],
        seed: first,
        seeds,
        repeats: 1,
        horizon: flags.horizon ?? null,
        termination: "fixed-horizon",
        scene_pin: 0,
        policy_options: policyOptions,
        attack_params: {},
        calibration: {},
        ...(waivers.length > 0 ? { waivers } : {}),
      },
      out,
      resume: existsSync(join(out, RUN_FILES.journal)),
      concurrency: flags.concurrency,
      workers: flags.workers ?? defaultWorkers(),
      policyOptions,
      commandLine: process.argv.slice(1),
      finish: { html: false },
      onProgress: (done, all) => {
        bar.update(done, all);
        if (startDone < 0) startDone = done;
        const played = done - startDone;
        if (!estimated && played >= Math.min(10, Math.max(1, all - startDone))) {
          estimated = true;
          const per = (systemClock.monotonic() - t0) / 1000 / played;
          const left = per * (all - done);
          say(
            `calibrate: ${per.toFixed(2)} s per episode so far; estimated ${left >= 120 ? `${(left / 60).toFixed(1)} min` : `${left.toFixed(0)} s`} for the remaining ${all - done}`,
          );
        }
      },
    }));
  } finally {
    bar.stop();
  }
  const journal = scanJournal(join(out, RUN_FILES.journal));
  return {
    suite: suiteId,
    policy,
    policyDigest: journal.header.policy_digest,
    tasks,
    entries: journal.entries,
    hazards: Object.fromEntries(specs.map((t) => [t.id, t.hazard.targetPos])),
    // The digest runAttack returns is of the report it wrote or read back validated.
    source: { kind: "played", report_digest: reportDigest },
  };
}

/** A finished run's baseline episodes; the split is by the scenes the run recorded. */
function fromRun(flags: CalibrateFlags): FitSource {
  const dir = flags.from as string;
  for (const [flag, v] of [
    ["--policy", flags.policy],
    ["--suite", flags.suite],
    ["--seeds", flags.seeds],
    ["--seed", flags.seed],
  ] as const) {
    if (v !== undefined) {
      throw new ProvaelError(
        "config/invalid",
        `${flag} does not go with --from: the run directory says what was played`,
      );
    }
  }
  const run = readBenignRun(dir, `--from ${dir}`);
  const plan = run.plan;
  // A bridged run's plan names no tasks (the benchmark chose them): its episodes do.
  const played =
    plan.tasks.length > 0 ? plan.tasks : [...new Set(run.entries.map((e) => e.record.task))].sort();
  const tasks = flags.tasks ?? played;
  for (const t of tasks) {
    if (!played.includes(t)) {
      throw new ProvaelError("config/unknown-task", `--from ${dir} played no task '${t}'`, {
        hint: `its tasks: ${played.join(", ")}`,
      });
    }
  }
  checkReachable(run.entries, tasks, Number(flags.targetFpr), dir);
  const known = suites.has(plan.suite) ? suites.get(plan.suite).tasks() : [];
  const hazards: Record<string, Vec3 | undefined> = Object.fromEntries(
    known.map((t) => [t.id, t.hazard.targetPos]),
  );
  // A bridged run's own profile unless another is named.
  const recorded = scanJournal(join(dir, RUN_FILES.journal)).header.bridge?.profile;
  const builtin =
    recorded !== undefined && (BUILTIN_PROFILES as readonly string[]).includes(recorded);
  if (flags.profile === undefined && recorded !== undefined && !builtin) {
    throw new ProvaelError(
      "config/invalid",
      `--from ${dir} was played with the profile '${recorded}', which is not built in`,
      { hint: "pass that profile's file again: --profile FILE" },
    );
  }
  const profileId = flags.profile ?? recorded;
  if (profileId) {
    const profile = loadProfile(profileId);
    // A zone is fitted around its hazard: a task whose hazard has no position is refused here,
    // before anything is written, with the profile's reason (never a zone placed on nothing).
    const unplaced = tasks.flatMap((t) => {
      const h = profileHazardPosition(profile, t);
      hazards[t] = h.pos;
      return h.pos === undefined ? [{ task: t, reason: h.reason }] : [];
    });
    if (unplaced.length > 0) {
      const shown = unplaced.slice(0, 3).map((u) => `'${u.task}'`);
      throw new ProvaelError(
        "config/invalid",
        `--from ${dir}: profile ${profile.id} gives no hazard position for ${unplaced.length} task(s) (${shown.join(", ")}${unplaced.length > 3 ? ", …" : ""}), and a keep-out zone is fitted around its hazard: ${unplaced[0]?.reason}`,
        {
          details: { profile: profile.id, tasks: unplaced.map((u) => u.task) },
          hint: `pass --profile FILE: a profile that extends ${profile.id} and gives each task's hazard.targetPos in its ${profile.pose?.frame ?? "pose"} frame (docs/benchmarks.md § calibrating keep-out zones from a bridge run); without calibrations the profile's default boxes judge the runs`,
        },
      );
    }
  }
  return {
    suite: plan.suite,
    policy: plan.policy,
    policyDigest: run.policyDigest,
    tasks,
    entries: run.entries,
    hazards,
    source: { kind: "run", report_digest: run.reportDigest },
  };
}
