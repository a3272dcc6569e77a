/**
 * Playing a plan from the command line and printing what came of it: the progress bar, Ctrl-C,
 * the arms table, the verdict, the next steps, and the exit status. `attack` parses its flags into
 * a plan and calls these; the words printed come from report/text.ts, as for `merge` and `bridge`.
 */
import { join } from "node:path";
import { systemClock } from "../core/clock.js";
import { erroredArms, nextSteps, planHeader, runText, verdictLines } from "../report/text.js";
import { RUN_FILES } from "../rundir/files.js";
import { calibrationHintOf } from "../runner/calibration-plan.js";
import { durationText, estimatePlan } from "../runner/estimate.js";
import { dryRunAttack, type RunOptions, runAttack } from "../runner/run.js";
import { EXIT, verdictExitCode } from "./exit.js";
import { progressMode, progressReporter } from "./progress.js";
import { stopOnSignal } from "./stop.js";

/** `runs/<policy>-<suite>-<UTC time>`: where a run goes without --out. */
export function defaultOut(policy: string, suite: string): string {
  const stamp = new Date(systemClock.now())
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\..*/, "")
    .replace("T", "-");
  return join("runs", `${policy}-${suite}-${stamp}`);
}

/** The command that finishes this run: the same arguments, with --out and --resume. */
export function resumeCommand(out: string, argv: string[] = process.argv.slice(2)): string {
  const args = argv.filter((a) => a !== "--resume");
  const hasOut = args.some((a) => a === "--out" || a.startsWith("--out="));
  const quote = (a: string) =>
    /^[A-Za-z0-9_./:=,@%+-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`;
  return ["provael", ...args, ...(hasOut ? [] : ["--out", out]), "--resume"].map(quote).join(" ");
}

/**
 * `--dry-run`: every check the run makes before its first episode (runner/run.ts
 * `dryRunAttack`: the policy is loaded, a served one must answer), then the cells it (or its
 * shard) would play, how many --reuse would copy, and the estimated time.
 */
export async function dryRun(
  options: Omit<RunOptions, "onProgress" | "signal">,
  o: { json?: boolean | undefined },
): Promise<void> {
  const d = await dryRunAttack(options);
  const { plan, cells } = d;
  const shard = options.shard ?? null;
  const header = planHeader(
    { ...plan, shard: shard ? `${shard.index}/${shard.count}` : null },
    cells.length,
  );
  const toPlay = cells.length - d.done - d.reused;
  const estimate = estimatePlan({
    policy: plan.policy,
    suite: plan.suite,
    tasks: plan.tasks,
    episodesPerTask: toPlay / plan.tasks.length,
    horizon: plan.horizon,
    workers: options.workers ?? 1,
    arms: plan.arms,
  });
  if (o.json)
    process.stdout.write(
      `${JSON.stringify({ plan, episodes: cells.length, ...(options.reuse ? { reused: d.reused } : {}), ...(d.done > 0 ? { done: d.done } : {}), estimate }, null, 2)}\n`,
    );
  else
    process.stdout.write(
      `${header}\n${options.reuse ? `(${d.reused} of ${cells.length} episodes would be copied from --reuse)\n` : ""}${d.done > 0 ? `(${d.done} of ${cells.length} episodes already finished in ${options.out})\n` : ""}checked as the run checks it (plan, run directory, policy loaded, pairing, scenes, calibrations)\nestimated time: ${durationText(estimate.seconds)} for ${toPlay} episode(s) (${estimate.basis})\n(dry run: nothing played)\n`,
    );
}

/** How the finished run is printed. */
export interface PrintOptions {
  json: boolean;
  html: boolean;
  reuse?: string[] | undefined;
}

/**
 * Plays the run with a progress bar on a terminal and a stop on Ctrl-C or SIGTERM, then prints
 * the result and sets the exit status (verdict, interrupted, incomplete, or arms that all errored).
 */
export async function playAndPrint(
  options: Omit<RunOptions, "onProgress" | "signal">,
  print: PrintOptions,
): Promise<void> {
  const out = options.out;
  const bar = progressReporter(progressMode(print.json, Boolean(process.stderr.isTTY)));
  // Ctrl-C or SIGTERM: stop starting episodes, let those in flight finish and be journalled,
  // then say how to continue. A second signal abandons the ones in flight.
  let saved = 0;
  let total = 0;
  const interrupted = () =>
    `interrupted: ${saved} of ${total} episodes saved in ${out}; continue with: ${resumeCommand(out)}\n`;
  const stop = stopOnSignal({
    quiet: () => bar.stop(),
    // Once every episode is played there is none in flight: the outputs are being written.
    stopping: () =>
      total > 0 && saved === total
        ? "provael: stopping: every episode is played; writing the report first (signal again to abandon it)"
        : "provael: stopping: finishing the episodes in flight (signal again to abandon them)",
    abandoned: interrupted,
  });
  let result: Awaited<ReturnType<typeof runAttack>>;
  try {
    result = await runAttack({
      ...options,
      onProgress: (d, t, errors) => {
        saved = d;
        total = t;
        bar.update(d, t, errors);
      },
      signal: stop.signal,
    });
  } finally {
    bar.stop();
    stop.release();
  }
  if (stop.signal.aborted && !result.report) {
    process.stderr.write(interrupted());
    process.exitCode = EXIT.interrupted;
    return;
  }
  const verdict = result.verdict;
  if (result.alreadyComplete) {
    if (print.json)
      process.stdout.write(
        `${JSON.stringify({ out, complete: true, played: 0, report_digest: result.reportDigest, verdict })}\n`,
      );
    else {
      process.stdout.write(
        `${out} is already complete; nothing to do (see ${join(out, RUN_FILES.markdown)})\n`,
      );
      if (verdict) process.stdout.write(`${verdictLines(verdict)}\n`);
    }
    if (verdict) process.exitCode = verdictExitCode(verdict);
    return;
  }
  const report = result.report;
  if (!report) {
    process.stderr.write(
      `provael: run stopped with ${result.total - result.played} episode(s) left; finish it with --resume --out ${out}\n`,
    );
    process.exitCode = EXIT.incomplete;
    return;
  }
  if (print.json) {
    process.stdout.write(
      `${JSON.stringify({ out, report_digest: result.reportDigest, played: result.played, ...(print.reuse ? { copied: result.copied } : {}), summary: report.summary, arms: report.arms, verdict }, null, 2)}\n`,
    );
  } else {
    process.stdout.write(`\n${runText(report, { via: "attack", dir: out })}\n\n`);
    if (verdict) process.stdout.write(`${verdictLines(verdict)}\n\n`);
    if (print.reuse)
      process.stdout.write(
        `played ${result.played} episode(s); copied ${result.copied} finished in ${print.reuse.join(", ")} (--reuse)\n`,
      );
    process.stdout.write(
      `wrote ${out}/report.json (${result.reportDigest}), report.md${print.html ? ", report.html" : ""}, trajectories.jsonl, execution-manifest.json\n`,
    );
    const path = options.policyOptions.path;
    process.stdout.write(
      `${nextSteps(out, print.html, calibrationHintOf(report, typeof path === "string" ? path : undefined)).join("\n")}\n`,
    );
  }
  if (verdict) process.exitCode = verdictExitCode(verdict);
  const dead = erroredArms(report);
  if (dead.length > 0) {
    const first = report.episodes.find((e) => e.arm === dead[0] && e.error)?.error;
    process.stderr.write(
      `provael: every episode of ${dead.join(", ")} errored${first ? ` (first: ${first.code}: ${first.message})` : ""}; those arms measured nothing\n  hint: see the errors in ${join(out, RUN_FILES.markdown)}; fix the cause and rerun\n`,
    );
    process.exitCode = EXIT.runtime;
  }
}
