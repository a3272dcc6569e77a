import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { canonicalJson } from "../core/canonical-json.js";
import { ProvaelError } from "../core/errors.js";
import { TOOL_VERSION } from "../core/package-root.js";
import type { Vec3 } from "../core/types.js";
import { type BenignEpisode, type Calibration, fitCalibration } from "../judges/calibrate.js";
import { policies } from "../policies/index.js";
import { pct } from "../report/format.js";
import { CALIBRATION_SUFFIX } from "../runner/calibration.js";
import { defaultWorkers } from "../runner/executor.js";
import { writeFileAtomic } from "../runner/files.js";
import { readTrajectory, scanJournal } from "../runner/journal.js";
import { runAttack } from "../runner/run.js";
import { suites } from "../suites/index.js";
import { EXIT } from "./exit.js";
import { integer, list } from "./parse.js";
import { progressBar } from "./progress.js";
import { textTable } from "./table.js";

interface CalibrateFlags {
  policy: string;
  suite: string;
  tasks?: string[];
  seeds: number;
  seed: number;
  horizon?: number;
  targetFpr: string;
  out: string;
  concurrency: number;
  workers?: number;
  policyPath?: string;
  json?: boolean;
}

export function registerCalibrate(program: Command): void {
  program
    .command("calibrate")
    .description("fit per-task keep-out zones from benign rollouts at a target false-positive rate")
    .requiredOption("--policy <id>", "policy to calibrate for")
    .requiredOption("--suite <id>", "suite")
    .option("--tasks <list>", "tasks (default: all)", list)
    .option(
      "--seeds <n>",
      "benign seeds per task, split into fit and holdout halves",
      integer("--seeds", { min: 2 }),
      200,
    )
    .option("--seed <n>", "first seed", integer("--seed", { min: 0 }), 0)
    .option(
      "--horizon <n>",
      "steps per episode (default: each task's)",
      integer("--horizon", { min: 1 }),
    )
    .option(
      "--target-fpr <p>",
      "largest benign false-positive rate allowed on the holdout split",
      "0.01",
    )
    .option("--concurrency <n>", "episodes in flight", integer("--concurrency", { min: 1 }), 1)
    .option(
      "--workers <n>",
      "worker threads (default: every core)",
      integer("--workers", { min: 1 }),
    )
    .option("--policy-path <path>", "weights for the policy")
    .requiredOption(
      "--out <dir>",
      "directory for <task>.calibration.json files (and the benign rollouts)",
    )
    .option("--json", "print JSON")
    .action(async (flags: CalibrateFlags) => {
      const target = Number(flags.targetFpr);
      if (!(target > 0 && target < 1)) {
        throw new ProvaelError(
          "config/invalid",
          `--target-fpr must be a number in (0, 1), got '${flags.targetFpr}'`,
        );
      }
      const suite = suites.get(flags.suite);
      policies.get(flags.policy);
      const tasks = flags.tasks ?? suite.tasks().map((t) => t.id);
      if (
        existsSync(flags.out) &&
        readdirSync(flags.out).some((f) => f.endsWith(CALIBRATION_SUFFIX))
      ) {
        throw new ProvaelError("run/out-exists", `${flags.out} already holds calibration files`, {
          hint: "calibrations are never overwritten: choose another --out",
        });
      }
      mkdirSync(flags.out, { recursive: true });
      const rollouts = join(flags.out, "rollouts");
      const bar = progressBar(Boolean(process.stderr.isTTY) && !flags.json);
      const policyOptions = flags.policyPath ? { path: flags.policyPath } : {};
      let result: Awaited<ReturnType<typeof runAttack>>;
      try {
        result = await runAttack({
          plan: {
            policy: flags.policy,
            suite: flags.suite,
            tasks,
            arms: ["none"],
            seed: flags.seed,
            seeds: flags.seeds,
            repeats: 1,
            horizon: flags.horizon ?? null,
            termination: "fixed-horizon",
            scenePin: 0,
            policyOptions,
            attackParams: {},
            calibration: {},
          },
          out: rollouts,
          resume: existsSync(join(rollouts, "journal.jsonl")),
          concurrency: flags.concurrency,
          workers: flags.workers ?? defaultWorkers(),
          policyOptions,
          commandLine: process.argv.slice(1),
          onProgress: (d, t) => bar.update(d, t),
        });
      } finally {
        bar.stop();
      }
      const journal = scanJournal(join(rollouts, "journal.jsonl"));
      const policyDigest = result.report?.run.policy_digest ?? readReportDigest(rollouts);
      const written: Calibration[] = [];
      const refused: { task: string; reason: string; hint: string }[] = [];
      for (const task of tasks) {
        const spec = suite.tasks().find((t) => t.id === task);
        const episodes: BenignEpisode[] = journal.entries
          .filter((e) => e.record.task === task && e.record.error === null)
          .map((e) => ({
            seed: e.record.seed,
            positions: readTrajectory(e).flatMap((s) => (s.pose ? [s.pose as Vec3] : [])),
          }));
        try {
          const c = fitCalibration({
            task,
            suite: flags.suite,
            policy: flags.policy,
            policyDigest,
            toolVersion: TOOL_VERSION,
            targetFpr: target,
            episodes,
            ...(spec?.hazard.targetPos ? { hazardPos: spec.hazard.targetPos } : {}),
          });
          writeFileAtomic(join(flags.out, `${task}${CALIBRATION_SUFFIX}`), `${canonicalJson(c)}\n`);
          written.push(c);
        } catch (e) {
          if (!(e instanceof ProvaelError) || e.code !== "calibration/degenerate") throw e;
          refused.push({ task, reason: e.message, hint: e.hint ?? "" });
        }
      }
      if (flags.json) {
        process.stdout.write(
          `${JSON.stringify({ out: flags.out, calibrations: written, refused }, null, 2)}\n`,
        );
      } else {
        process.stdout.write(
          `${textTable(
            ["task", "face", "margin (m)", "holdout FPR [95% Wilson]", "fit n", "holdout n"],
            written.map((c) => [
              c.task,
              `${c.face.sign > 0 ? "+" : "-"}${"xyz"[c.face.axis]}`,
              c.margin.toFixed(3),
              `${c.holdout.false_positives}/${c.holdout.n} = ${pct(c.holdout.fpr)} [${pct(c.holdout.interval.low)}–${pct(c.holdout.interval.high)}]`,
              String(c.fit.n),
              String(c.holdout.n),
            ]),
          )}\n`,
        );
        for (const r of refused)
          process.stderr.write(`provael: refused: ${r.reason}\n  hint: ${r.hint}\n`);
        process.stdout.write(`wrote ${written.length} calibration file(s) to ${flags.out}\n`);
      }
      if (refused.length > 0) process.exitCode = EXIT.usage;
    });
}

function readReportDigest(dir: string): string | null {
  try {
    return (
      JSON.parse(readFileSync(join(dir, "report.json"), "utf8")) as {
        run: { policy_digest: string | null };
      }
    ).run.policy_digest;
  } catch {
    return null;
  }
}
