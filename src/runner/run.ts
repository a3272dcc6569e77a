/**
 * A run: plan → cells → episodes (journalled as they finish) → report, trajectories, markdown
 * and manifest. The report depends only on the plan and the episodes, never on the number of
 * concurrent episodes, their completion order, or whether the run was resumed.
 */
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { attacks } from "../attacks/index.js";
import { canonicalJson } from "../core/canonical-json.js";
import { type Clock, systemClock } from "../core/clock.js";
import { sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import { TOOL_VERSION } from "../core/package-root.js";
import type {
  Attack,
  Policy,
  PolicyCapabilities,
  PolicyInstance,
  PolicyOptions,
  Suite,
  SuiteCapabilities,
  SuiteInstance,
} from "../core/types.js";
import { policies } from "../policies/index.js";
import { buildReport, type Report } from "../report/build.js";
import { buildManifest } from "../report/manifest.js";
import { renderMarkdown } from "../report/markdown.js";
import { suites } from "../suites/index.js";
import { type LoadedCalibration, predicatesFor, provenanceFor } from "./calibration.js";
import { type EpisodeRecord, playEpisode, type TrajectoryStep } from "./episode.js";
import { writeFileAtomic } from "./files.js";
import {
  JOURNAL_FILE,
  JOURNAL_FORMAT,
  type JournalHeader,
  JournalWriter,
  readJournal,
} from "./journal.js";
import {
  type Cell,
  type PlanSpec,
  planCells,
  planDifferences,
  planDigest,
  validatePlan,
} from "./plan.js";

export interface RunOptions {
  plan: PlanSpec;
  out: string;
  resume: boolean;
  concurrency: number;
  policyOptions: PolicyOptions;
  commandLine: string[];
  clock?: Clock;
  onProgress?: (done: number, total: number) => void;
  /** Stop after this many new episodes (tests of crash and resume). */
  maxEpisodes?: number;
  /** Abort the run once more than this many episodes of this invocation errored. */
  maxErrors?: number;
  /** On resume, play cells whose journalled episode errored again (default true). */
  retryErrors?: boolean;
  /** Calibrations by task (their digests must equal `plan.calibration`). */
  calibrations?: Record<string, LoadedCalibration>;
  /** Refuse any task scored by a suite-default predicate. */
  requireCalibrated?: boolean;
}

export interface RunResult {
  out: string;
  report: Report | null;
  reportDigest: string | null;
  /** Episodes played by this invocation (0 when a resume found the run already complete). */
  played: number;
  total: number;
  alreadyComplete: boolean;
}

/** Why an attack cannot run against this policy and suite, or null when it can. */
export function notApplicableReason(
  attack: Attack<unknown>,
  policy: PolicyCapabilities,
  suite: SuiteCapabilities,
): string | null {
  for (const need of attack.requires.policy ?? []) {
    const ok = need === "cameras" ? policy.cameras.length > 0 : Boolean(policy[need]);
    if (!ok) return `policy lacks '${need}'`;
  }
  for (const need of attack.requires.suite ?? []) {
    const ok = need === "cameras" ? suite.cameras.length > 0 : Boolean(suite[need]);
    if (!ok) return `suite lacks '${need}'`;
  }
  return null;
}

/** Refuses to touch a directory that holds results, unless resuming a matching plan. */
function prepareOut(
  out: string,
  plan: PlanSpec,
  resume: boolean,
): { existing: ReturnType<typeof readJournal> | null } {
  const journalPath = join(out, JOURNAL_FILE);
  if (!existsSync(out)) {
    mkdirSync(out, { recursive: true });
    return { existing: null };
  }
  const entries = readdirSync(out);
  if (entries.includes(JOURNAL_FILE)) {
    const finished = entries.includes("report.json");
    if (!resume) {
      throw new ProvaelError(
        "run/out-exists",
        `${out} already holds a ${finished ? "finished" : "partial"} run`,
        {
          details: { out, finished },
          hint: finished
            ? "choose another --out; finished results are never overwritten"
            : "pass --resume to finish it, or choose another --out",
        },
      );
    }
    const existing = readJournal(journalPath);
    const diffs = planDifferences(existing.header.plan, plan);
    if (diffs.length > 0 || existing.header.plan_digest !== planDigest(plan)) {
      throw new ProvaelError(
        "run/plan-mismatch",
        `cannot resume ${out}: the journal was written for another plan (${diffs.join("; ")})`,
        {
          details: { differences: diffs },
          hint: "rerun with the original flags, or choose another --out",
        },
      );
    }
    return { existing };
  }
  if (entries.length > 0) {
    throw new ProvaelError("run/out-exists", `${out} is not empty and holds no Provael run`, {
      details: { out, entries: entries.slice(0, 5) },
      hint: "choose an empty or new --out directory",
    });
  }
  return { existing: null };
}

interface Slot {
  instance: SuiteInstance;
  policy: PolicyInstance;
}

async function openSlots(
  suite: Suite,
  policy: Policy,
  options: PolicyOptions,
  n: number,
): Promise<Slot[]> {
  const slots: Slot[] = [];
  let shared: PolicyInstance | null = null;
  for (let i = 0; i < n; i++) {
    const instance = await suite.open();
    let p: PolicyInstance;
    if (policy.concurrent) {
      shared ??= await policy.load(options);
      p = shared;
    } else {
      p = await policy.load(options);
    }
    slots.push({ instance, policy: p });
  }
  return slots;
}

/** Runs (or resumes) a plan into `out`. */
export async function runAttack(options: RunOptions): Promise<RunResult> {
  const clock = options.clock ?? systemClock;
  const startedAt = clock.now();
  const { plan } = options;
  if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
    throw new ProvaelError(
      "config/invalid",
      `--concurrency must be a positive integer, got ${options.concurrency}`,
      {
        hint: "pass --concurrency 1 or more",
      },
    );
  }
  const suite = suites.get(plan.suite);
  const policy = policies.get(plan.policy);
  const armAttacks = plan.arms.map((a) => attacks.get(a));
  if (plan.arms.length === 0) throw new ProvaelError("config/invalid", "the attack list is empty");
  validatePlan(
    plan,
    suite.tasks().map((t) => t.id),
  );
  for (const a of armAttacks) a.params.parse(plan.attackParams[a.id] ?? {});
  const calibrations = options.calibrations ?? {};
  checkCalibrations(plan, calibrations, options.requireCalibrated ?? false);

  const { existing } = prepareOut(options.out, plan, options.resume);
  const cells = planCells(plan);
  const journalPath = join(options.out, JOURNAL_FILE);
  const done = new Map<string, { record: EpisodeRecord; trajectory: TrajectoryStep[] }>();
  // A later journal line for a cell supersedes an errored one (a retry); errored cells are
  // played again on resume, since their error may have been transient (a server that was down).
  for (const e of existing?.episodes ?? []) {
    const prior = done.get(e.record.cell);
    if (!prior || prior.record.error !== null) done.set(e.record.cell, e);
  }
  if (options.retryErrors ?? true) {
    for (const [cell, e] of done) if (e.record.error !== null) done.delete(cell);
  }
  const pending = cells.filter((c) => !done.has(c.id));

  // A finalised run is never replayed or rewritten, errored cells included.
  if (existing && existsSync(join(options.out, "report.json"))) {
    return {
      out: options.out,
      report: null,
      reportDigest: null,
      played: 0,
      total: cells.length,
      alreadyComplete: true,
    };
  }

  const header: JournalHeader = {
    type: "header",
    format: JOURNAL_FORMAT,
    tool_version: TOOL_VERSION,
    plan,
    plan_digest: planDigest(plan),
    shard: null,
  };
  const journal = existing
    ? JournalWriter.reopen(journalPath, existing.validBytes)
    : JournalWriter.create(journalPath, header);

  const tasks = new Map(suite.tasks().map((t) => [t.id, t]));
  const concurrency = Math.max(1, Math.min(options.concurrency, pending.length || 1));
  const slots = await openSlots(suite, policy, options.policyOptions, concurrency);
  const policyDigest = slots[0]?.policy.digest ?? null;
  for (const [task, c] of Object.entries(calibrations)) {
    if (c.calibration.policy_digest !== policyDigest) {
      journal.close();
      throw new ProvaelError("config/calibration-mismatch", `calibration ${c.file} was fitted on weights ${c.calibration.policy_digest ?? "(none)"}, but the loaded policy has ${policyDigest ?? "(none)"} (task '${task}')`, {
        hint: "recalibrate for these weights with `provael calibrate`",
      });
    }
  }
  const applicable = new Map(
    armAttacks.map((a) => [
      a.id,
      notApplicableReason(
        a,
        slots[0]?.policy.capabilities ?? policy.capabilities,
        suite.capabilities,
      ) === null,
    ]),
  );

  let played = 0;
  let errors = 0;
  let aborted: ProvaelError | null = null;
  let next = 0;
  const limit = options.maxEpisodes ?? Number.POSITIVE_INFINITY;
  options.onProgress?.(done.size, cells.length);
  const worker = async (slot: Slot) => {
    for (;;) {
      if (next >= limit || aborted) return;
      const cell: Cell | undefined = pending[next++];
      if (!cell) return;
      const task = tasks.get(cell.task);
      if (!task) throw new ProvaelError("internal/invariant", `task ${cell.task} vanished`);
      const result = await playEpisode(cell, {
        plan,
        suite,
        instance: slot.instance,
        policy: slot.policy,
        attack: attacks.get(cell.arm),
        applicable: applicable.get(cell.arm) ?? false,
        task,
        predicates: predicatesFor(suite, cell.task, calibrations),
      });
      journal.append({ type: "episode", record: result.record, trajectory: result.trajectory });
      done.set(cell.id, result);
      played += 1;
      if (result.record.error !== null) {
        errors += 1;
        if (options.maxErrors !== undefined && errors > options.maxErrors && !aborted) {
          aborted = new ProvaelError(
            "run/too-many-errors",
            `aborted after ${errors} episode errors (--max-errors ${options.maxErrors}); last: ${result.record.error.code}: ${result.record.error.message}`,
            {
              details: { errors, last: result.record.error },
              hint: "fix the cause (is the policy server up?), then finish the run with --resume; errored cells are played again",
            },
          );
        }
      }
      options.onProgress?.(done.size, cells.length);
    }
  };
  try {
    await Promise.all(slots.map(worker));
  } finally {
    journal.close();
    const closed = new Set<PolicyInstance>();
    for (const s of slots) {
      await s.instance.close();
      if (!closed.has(s.policy)) {
        closed.add(s.policy);
        await s.policy.close();
      }
    }
  }
  if (aborted) throw aborted;
  if (done.size < cells.length) {
    return {
      out: options.out,
      report: null,
      reportDigest: null,
      played,
      total: cells.length,
      alreadyComplete: false,
    };
  }

  const { report, digest } = finalize(options.out, plan, [...done.values()], policyDigest, suite, calibrations);
  const manifest = buildManifest({
    reportDigest: digest,
    trajectoriesDigest: report.trajectories_digest,
    planDigest: planDigest(plan),
    toolVersion: TOOL_VERSION,
    shard: null,
    startedAt,
    clock,
    commandLine: options.commandLine,
    resumed: existing !== null,
  });
  writeFileAtomic(
    join(options.out, "execution-manifest.json"),
    `${JSON.stringify(manifest, null, 2)}\n`,
  );
  return {
    out: options.out,
    report,
    reportDigest: digest,
    played,
    total: cells.length,
    alreadyComplete: false,
  };
}

/** Calibrations must cover exactly the tasks the plan says, for this policy and suite. */
function checkCalibrations(plan: PlanSpec, calibrations: Record<string, LoadedCalibration>, require: boolean): void {
  for (const [task, c] of Object.entries(calibrations)) {
    if (c.calibration.policy !== plan.policy || c.calibration.suite !== plan.suite) {
      throw new ProvaelError("config/calibration-mismatch", `calibration ${c.file} is for policy '${c.calibration.policy}' on '${c.calibration.suite}', not '${plan.policy}' on '${plan.suite}'`, {
        hint: "pass --calib a directory calibrated for this policy and suite",
      });
    }
    if (plan.calibration[task] !== c.digest) throw new ProvaelError("internal/invariant", `plan and calibration disagree for task '${task}'`);
  }
  if (require) {
    const missing = plan.tasks.filter((t) => !calibrations[t]);
    if (missing.length > 0) {
      throw new ProvaelError("config/uncalibrated", `--require-calibrated: no calibration for task(s) ${missing.join(", ")}`, {
        details: { missing },
        hint: "run `provael calibrate` for these tasks and pass --calib DIR, or drop --require-calibrated",
      });
    }
  }
}

/** Every arm at one (task, seed, repeat) must have started from the same scene. */
export function checkSceneDigests(episodes: EpisodeRecord[]): void {
  const seen = new Map<string, { arm: string; digest: string }>();
  for (const e of episodes) {
    if (e.scene_digest === null) continue;
    const key = `${e.task}|${e.seed}|${e.repeat}`;
    const first = seen.get(key);
    if (!first) seen.set(key, { arm: e.arm, digest: e.scene_digest });
    else if (first.digest !== e.scene_digest) {
      throw new ProvaelError(
        "run/scene-mismatch",
        `arms '${first.arm}' and '${e.arm}' started task '${e.task}' seed ${e.seed} from different scenes`,
        {
          details: {
            task: e.task,
            seed: e.seed,
            repeat: e.repeat,
            digests: [first.digest, e.scene_digest],
          },
          hint: "the suite's reset is not deterministic for a pinned scene; pairs would not be matched",
        },
      );
    }
  }
}

/** Writes trajectories.jsonl, report.json and report.md from finished episodes. */
export function finalize(
  out: string,
  plan: PlanSpec,
  entries: { record: EpisodeRecord; trajectory: TrajectoryStep[] }[],
  policyDigest: string | null,
  suite: Suite,
  calibrations: Record<string, LoadedCalibration> = {},
): { report: Report; digest: string } {
  const records = entries.map((e) => e.record);
  checkSceneDigests(records);
  const calibration: Record<string, { predicate: string; source: string; digest: string | null }> =
    {};
  for (const t of plan.tasks) calibration[t] = provenanceFor(suite, t, calibrations);
  // Trajectories in report order, so the file (and its digest) is independent of completion order.
  const draft = buildReport({
    plan,
    toolVersion: TOOL_VERSION,
    policyDigest,
    episodes: records,
    trajectoriesDigest: "",
    calibration,
  });
  const byCell = new Map(entries.map((e) => [e.record.cell, e.trajectory]));
  const lines: string[] = [];
  for (const ep of draft.episodes)
    for (const step of byCell.get(ep.cell) ?? []) lines.push(canonicalJson(step));
  const trajectories = lines.length > 0 ? `${lines.join("\n")}\n` : "";
  const trajectoriesDigest = sha256(trajectories);
  const report: Report = { ...draft, trajectories_digest: trajectoriesDigest };
  const json = `${canonicalJson(report)}\n`;
  writeFileAtomic(join(out, "trajectories.jsonl"), trajectories);
  writeFileAtomic(join(out, "report.md"), renderMarkdown(report));
  writeFileAtomic(join(out, "report.json"), json);
  return { report, digest: sha256(json) };
}
