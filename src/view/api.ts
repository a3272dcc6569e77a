/**
 * The viewer's answers, built from `readRun`: the runs list, one run (its report without the
 * episodes, and one compact row per episode), one episode beside its benign twin, and the
 * comparison of two runs under the regression gate. The server and the bundle both use these.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { ProvaelError } from "../core/errors.js";
import { reportArms } from "../report/arms.js";
import { buildReport, type Report } from "../report/build.js";
import { caveats } from "../report/caveats.js";
import { compareReports } from "../report/regression.js";
import { readShowcaseClip } from "../report/showcase-clip.js";
import { CELL_ID, RUN_FILES } from "../rundir/files.js";
import { type FinishedRun, type RunningRun, type RunRead, readSteps } from "../rundir/read.js";
import type { JournalRecord, ReportFile } from "../rundir/schema/index.js";
import type { PlanSpec } from "../runner/plan.js";
import { suites } from "../suites/index.js";
import type { Catalog, CatalogEntry } from "./catalog.js";
import type {
  ComparePayload,
  EpisodePayload,
  EpisodeRecordPayload,
  EpisodeRow,
  Rate,
  RunPayload,
  RunSummary,
  ZonePayload,
} from "./payloads.js";
import { replayPlan } from "./replay.js";

const NO_DIGEST = `sha256:${"0".repeat(64)}`;

/** The report of a run: its own, or one built from the episodes journalled so far. */
export function reportOf(read: RunRead): { report: ReportFile; partial: boolean } | null {
  if (read.state === "finished") return { report: read.report, partial: false };
  if (read.state !== "in-progress") return null;
  return { report: partialReport(read), partial: true };
}

const partialCache = new WeakMap<RunningRun, ReportFile>();

function partialReport(read: RunningRun): ReportFile {
  const hit = partialCache.get(read);
  if (hit) return hit;
  const plan = read.header.plan as PlanSpec;
  const report = buildReport({
    plan,
    arms: reportArms(plan),
    toolVersion: read.header.tool_version,
    policyDigest: read.header.policy_digest,
    episodes: read.episodes as Report["episodes"],
    trajectoriesDigest: NO_DIGEST,
    calibration: {},
    shard: read.header.shard,
    bridge: read.header.bridge ?? null,
  });
  partialCache.set(read, report);
  return report;
}

export function summarize(entry: CatalogEntry, read: RunRead): RunSummary {
  const base: RunSummary = {
    id: entry.id,
    label: entry.label,
    state: read.state,
    policy: read.header?.plan.policy ?? null,
    suite: read.header?.plan.suite ?? null,
    protocol: null,
    tool_version: read.header?.tool_version ?? null,
    arms: read.header?.plan.arms ?? [],
    tasks: read.header?.plan.tasks ?? [],
    episodes: 0,
    planned: null,
    partial: false,
    headline: null,
    finished_at: null,
    digest: null,
    plan_digest: read.header?.plan_digest ?? null,
    problem: null,
  };
  if (read.state === "broken") return { ...base, problem: read.problem.message };
  const got = reportOf(read);
  if (!got) return base;
  const { report, partial } = got;
  const s = report.summary;
  return {
    ...base,
    policy: report.run.policy,
    suite: report.run.suite,
    protocol: report.protocol,
    tool_version: report.tool_version,
    arms: report.run.arms,
    tasks: report.run.tasks,
    episodes: report.episodes.length,
    planned: read.state === "in-progress" ? read.planned : report.episodes.length,
    partial,
    headline: {
      treatment_unsafe: s.treatment_unsafe,
      baseline_unsafe: s.baseline_unsafe,
      control_unsafe: s.control_unsafe,
      clean_task_success: s.clean_task_success,
    },
    finished_at: read.state === "finished" ? (read.manifest?.finished_at ?? null) : null,
    digest: read.state === "finished" ? read.digest : null,
    plan_digest:
      read.state === "finished"
        ? (read.manifest?.plan_digest ?? base.plan_digest)
        : base.plan_digest,
  };
}

export function runsPayload(catalog: Catalog): RunSummary[] {
  return catalog.refresh().map((e) => summarize(e, catalog.read(e.id)));
}

function row(e: EpisodeRecordPayload): EpisodeRow {
  return {
    cell: e.cell,
    task: e.task,
    arm: e.arm,
    seed: e.seed,
    repeat: e.repeat,
    scene: e.scene,
    unsafe: e.unsafe,
    task_success: e.task_success,
    error: e.error?.code ?? null,
    delivered: "delivered" in e ? (e.delivered ?? null) : null,
    judged_steps: e.judged_steps,
    first_unsafe_step: e.first_unsafe_step,
    instruction: e.instruction.received ?? e.instruction.original,
    not_applicable: e.termination === "not_applicable",
  };
}

export function runPayload(catalog: Catalog, id: string): RunPayload {
  const entry = catalog.entry(id);
  const read = catalog.read(id);
  const summary = summarize(entry, read);
  const got = reportOf(read);
  if (!got) return { summary, report: null, episodes: [], saved_frames: [], caveats: [] };
  const { episodes, ...head } = got.report;
  return {
    summary,
    report: head,
    episodes: episodes.map(row),
    saved_frames: read.state === "finished" ? Object.keys(read.frames) : [],
    caveats: caveats(got.report, { dir: entry.dir }).map((c) => c.text),
  };
}

/** A run that can be read (finished or in progress), or a usage error naming its problem. */
export function readable(catalog: Catalog, id: string): FinishedRun | RunningRun {
  const read = catalog.read(id);
  if (read.state === "broken") {
    throw new ProvaelError("io/malformed", read.problem.message, {
      hint: "the run directory was edited or damaged",
    });
  }
  return read;
}

export function checkCell(cell: string): string {
  if (!CELL_ID.test(cell)) {
    throw new ProvaelError("config/invalid", `'${cell.slice(0, 40)}' is not a cell id`, {
      hint: "cell ids are 'c' and 20 hex digits",
    });
  }
  return cell;
}

/**
 * How many characters of a cell id the viewer's episode table shows ('c' and 8 hex digits, as
 * src/view/client/episodes.ts cuts them): the shortest prefix a command takes for an id.
 */
export const SHOWN_CELL_CHARS = 9;

/** How many candidates an ambiguous prefix's refusal lists. */
const SHOWN_CANDIDATES = 8;

/**
 * The episode's full cell id from the id or any unique prefix of it at least as long as the
 * viewer shows: a shorter prefix, one that names no episode, or one that names several is
 * refused (the candidates listed, with their task, arm and seed).
 */
export function resolveCell(report: ReportFile, given: string): string {
  if (!/^c[0-9a-f]*$/.test(given) || given.length > 21) {
    throw new ProvaelError("config/invalid", `'${given.slice(0, 40)}' is not a cell id`, {
      hint: "cell ids are 'c' and 20 hex digits; any unique prefix of 9 characters or more is taken",
    });
  }
  if (given.length < SHOWN_CELL_CHARS) {
    throw new ProvaelError(
      "config/invalid",
      `cell id prefix '${given}' is shorter than the ${SHOWN_CELL_CHARS} characters the viewer shows`,
      { hint: "copy the id from `provael view`'s episode table, or the whole id from report.json" },
    );
  }
  const matches = report.episodes.filter((e) => e.cell.startsWith(given));
  if (matches.length === 1) return (matches[0] as EpisodeRecordPayload).cell;
  if (matches.length === 0) {
    throw new ProvaelError("run/not-found", `the run has no episode ${given}`, {
      hint: "open the run page and pick an episode from its table",
    });
  }
  const listed = matches
    .slice(0, SHOWN_CANDIDATES)
    .map((e) => `${e.cell} (${e.task}, ${e.arm}, seed ${e.seed})`)
    .join(", ");
  const more =
    matches.length > SHOWN_CANDIDATES ? ` and ${matches.length - SHOWN_CANDIDATES} more` : "";
  throw new ProvaelError(
    "config/invalid",
    `cell id prefix '${given}' names ${matches.length} episodes: ${listed}${more}`,
    { details: { candidates: matches.map((e) => e.cell) }, hint: "give more of the id" },
  );
}

/** The twin plays the same task, seed, repeat and defenses. */
const pairKey = (e: {
  task: string;
  seed: number;
  repeat: number;
  defenses?: string[] | undefined;
}) => `${e.task}\u0000${e.seed}\u0000${e.repeat}\u0000${(e.defenses ?? []).join(",")}`;

/** The episode of a cell and its benign twin (same task, seed and repeat in the baseline arm). */
export function findPair(
  report: ReportFile,
  cell: string,
): { episode: EpisodeRecordPayload; twin: EpisodeRecordPayload | null } {
  const episode = report.episodes.find((e) => e.cell === cell);
  if (!episode) {
    throw new ProvaelError("run/not-found", `the run has no episode ${cell}`, {
      hint: "open the run page and pick an episode from its table",
    });
  }
  const base = report.tests.baseline_arm;
  const twin =
    base === null || episode.arm === base
      ? null
      : (report.episodes.find((e) => e.arm === base && pairKey(e) === pairKey(episode)) ?? null);
  return { episode, twin };
}

function zonesFor(suiteId: string, task: string): ZonePayload[] {
  try {
    const spec = suites
      .get(suiteId)
      .tasks()
      .find((t) => t.id === task);
    return (spec?.hazard.zones ?? []).map((z) => ({
      id: z.id,
      label: z.label,
      min: z.min,
      max: z.max,
    }));
  } catch {
    return [];
  }
}

export function episodePayload(
  catalog: Catalog,
  id: string,
  cell: string,
  /** Steps already read (a bundle reads every wanted cell in one pass). */
  known?: Map<string, import("../rundir/schema/index.js").TrajectoryStepFile[]>,
): EpisodePayload {
  checkCell(cell);
  const entry = catalog.entry(id);
  const read = readable(catalog, id);
  const got = reportOf(read);
  if (!got) throw new ProvaelError("run/not-found", `run ${id} has no episodes yet`);
  const report = got.report;
  const { episode, twin } = findPair(report, cell);
  const cells = twin ? [episode.cell, twin.cell] : [episode.cell];
  const steps =
    known && cells.every((c) => known.has(c))
      ? known
      : readSteps(read.dir, cells, read.state === "finished" ? "trajectories" : "journal");
  const arm = report.arms[episode.arm];
  const replay = replayPlan(read);
  return {
    run: summarize(entry, read),
    episode,
    twin,
    arm: {
      name: episode.arm,
      family: arm?.family ?? null,
      role: arm?.role ?? null,
      eai: arm?.eai ?? null,
      access: arm?.access ?? null,
      matches: arm?.matches ?? null,
      params: report.run.attack_params?.[episode.arm] ?? null,
    },
    steps: {
      episode: steps.get(episode.cell) ?? [],
      twin: twin ? (steps.get(twin.cell) ?? []) : [],
    },
    zones: zonesFor(report.run.suite, episode.task),
    replay: { possible: replay.plan !== null, reason: replay.reason },
    showcase_clip: read.state === "finished" ? showcaseClipOf(read, cells) : null,
  };
}

/** The run's showcase clip when it shows one of `cells` (and its bytes are the ones named). */
export function showcaseClipOf(
  read: FinishedRun,
  cells: readonly string[],
): EpisodePayload["showcase_clip"] {
  // Checked once per clip file as it is on disk (its digest is read in full), not per request.
  const st = statSync(join(read.dir, RUN_FILES.showcaseClip), { throwIfNoEntry: false });
  const key = `${read.dir}\u0000${st?.mtimeMs ?? 0}\u0000${st?.size ?? -1}`;
  let info = clipChecks.get(key);
  if (info === undefined) {
    const clip = readShowcaseClip(read.report as unknown as Report, read.dir);
    info = clip.kind === "clip" ? clip.info : null;
    clipChecks.set(key, info);
  }
  if (info === null) return null;
  return cells.includes(info.attacked) || (info.twin !== null && cells.includes(info.twin))
    ? info
    : null;
}

const clipChecks = new Map<string, EpisodePayload["showcase_clip"]>();

/** Two runs side by side: per-arm deltas, the gate (b against a) and the pairs that changed. */
export function comparePayload(catalog: Catalog, a: string, b: string): ComparePayload {
  const ra = readable(catalog, a);
  const rb = readable(catalog, b);
  const A = reportOf(ra)?.report as ReportFile;
  const B = reportOf(rb)?.report as ReportFile;
  let gate: ComparePayload["gate"] = null;
  let gateError: string | null = null;
  try {
    gate = compareReports(B, A, {
      allowIncomparable: true,
    });
  } catch (e) {
    gateError = (e as Error).message;
  }
  const armNames = [...new Set([...A.run.arms, ...B.run.arms])];
  const arms = armNames.map((arm) => {
    const x: Rate | null = A.arms[arm]?.unsafe ?? null;
    const y: Rate | null = B.arms[arm]?.unsafe ?? null;
    return {
      arm,
      role: (B.arms[arm] ?? A.arms[arm])?.role ?? "treatment",
      a: x,
      b: y,
      delta: x?.rate != null && y?.rate != null ? y.rate - x.rate : null,
    };
  });
  const inA = new Map<string, JournalRecord>(A.episodes.map((e) => [e.cell, e]));
  const changed = B.episodes.flatMap((e) => {
    const o = inA.get(e.cell);
    if (!o || o.unsafe === e.unsafe) return [];
    return [
      {
        cell: e.cell,
        task: e.task,
        arm: e.arm,
        seed: e.seed,
        repeat: e.repeat,
        a: o.unsafe,
        b: e.unsafe,
      },
    ];
  });
  return {
    a: summarize(catalog.entry(a), ra),
    b: summarize(catalog.entry(b), rb),
    gate,
    gate_error: gateError,
    arms,
    changed,
  };
}
