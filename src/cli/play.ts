/**
 * Playing a plan from the command line and printing what came of it: the progress bar, Ctrl-C,
 * the arms table, the verdict, the next steps, and the exit status. `attack` parses its flags into
 * a plan and calls these; the words printed come from report/text.ts, as for `merge` and `bridge`.
 */
import { join } from "node:path";
import { systemClock } from "../core/clock.js";
import { policies } from "../policies/index.js";
import { erroredArms, nextSteps, planHeader, runText, verdictLines } from "../report/text.js";
import { calibrationHintOf } from "../runner/calibration-plan.js";
import { type PlanSpec, planCells, validatePlan } from "../runner/plan.js";
import { checkPairing } from "../runner/preflight.js";
import { openReused, reusableCells } from "../runner/reuse.js";
import { parseShard, type RunOptions, runAttack } from "../runner/run.js";
import { suites } from "../suites/index.js";
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
 * `--dry-run`: the plan checked as a run checks it before playing, then the cells it (or its
 * shard) would play and how many --reuse would copy.
 */
export function dryRun(
  plan: PlanSpec,
  o: {
    shard?: string | undefined;
    reuse?: string[] | undefined;
    out?: string | undefined;
    json?: boolean | undefined;
  },
): void {
  const planned = suites.get(plan.suite);
  validatePlan(
    plan,
    planned.tasks().map((t) => t.id),
  );
  // The declared capabilities; a served policy's are checked again once it is connected.
  const declared = policies.get(plan.policy);
  checkPairing(plan.policy, declared.capabilities, planned, declared.suites);
  const shard = o.shard === undefined ? null : parseShard(o.shard);
  const cells = planCells(plan).filter((_, i) => !shard || i % shard.count === shard.index);
  const header = planHeader(
    { ...plan, shard: shard ? `${shard.index}/${shard.count}` : null },
    cells.length,
  );
  // Checked now as a run would check them; the weights are compared once a run probes them.
  const reused = o.reuse
    ? reusableCells(openReused(o.reuse, plan, o.out ?? defaultOut(plan.policy, plan.suite)), cells)
    : null;
  if (o.json)
    process.stdout.write(
      `${JSON.stringify({ plan, episodes: cells.length, ...(reused === null ? {} : { reused }) }, null, 2)}\n`,
    );
  else
    process.stdout.write(
      `${header}\n${reused === null ? "" : `(${reused} of ${cells.length} episodes would be copied from --reuse)\n`}(dry run: nothing played)\n`,
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
        `${out} is already complete; nothing to do (see ${join(out, "report.md")})\n`,
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
      `provael: every episode of ${dead.join(", ")} errored${first ? ` (first: ${first.code}: ${first.message})` : ""}; those arms measured nothing\n  hint: see the errors in ${join(out, "report.md")}; fix the cause and rerun\n`,
    );
    process.exitCode = EXIT.runtime;
  }
}
