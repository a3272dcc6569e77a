/**
 * `provael attack --suite vla-eval`: the bridge started in this process on a free loopback
 * port, the user's benchmark launched once per arm address (and shard, and repeat) through a
 * command template, every episode journalled by the bridge, and when every process has ended the
 * same run directory `provael attack` writes (report.json, report.md with the verdict,
 * report.html, the SARIF log when asked, execution-manifest.json).
 *
 * The launches are recorded in `benchmark/launch.json` with each process's exit code, beside one
 * log per process; `--resume` relaunches only the processes that did not exit 0, and the bridge
 * refuses (and counts) a replayed episode of a (task, seed, arm) that already has its repeats,
 * so no episode is counted twice.
 *
 * Before any attack process starts, the benign arm plays `preflight.episodes` episodes; below
 * `preflight.minCleanSuccess` the run stops there (the benign episodes are reported).
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type Clock, systemClock } from "../../core/clock.js";
import type { EpisodeRecord } from "../../core/episode.js";
import { ProvaelError } from "../../core/errors.js";
import type { Report } from "../../report/build.js";
import type { FinishOptions } from "../../report/finalize.js";
import { RUN_FILES, writeFileAtomic } from "../../rundir/files.js";
import type { Refusal } from "../refusal.js";
import { type BridgeOptions, routeName, startBridge } from "../server.js";
import { completeOutputs } from "./outputs.js";
import { type JobExit, JobPool, type LaunchJob } from "./processes.js";
import { expandCommand, templatePlaceholders } from "./template.js";

export const LAUNCH_DIR = "benchmark";
export const LAUNCH_FILE = "benchmark/launch.json";

export interface PreflightOptions {
  /** Benign episodes played before any attack process starts (0: none). */
  episodes: number;
  /** The least clean task success those episodes must reach. */
  minCleanSuccess: number;
}

export interface BenchmarkRunOptions {
  /** The bridge, less what the launcher decides (address, run directory, resume, repeats). */
  bridge: Omit<
    BridgeOptions,
    "host" | "port" | "out" | "resume" | "repeats" | "onEvent" | "commandLine" | "clock"
  >;
  out: string;
  resume: boolean;
  /** Episodes counted per (task, seed, arm); each arm's benchmark is launched this many times. */
  repeats: number;
  /** The command template (`{config}`, `{url}`, `{arm}`, `{shard}`, `{num_shards}`). */
  command: string;
  /** The `--benchmark` file, for `{config}`. */
  config?: string;
  /** Benchmark processes at once. */
  concurrency: number;
  /** Shards per arm (vla-eval's `--shard-id/--num-shards`). */
  shards: number;
  preflight: PreflightOptions;
  finish: FinishOptions;
  commandLine: string[];
  clock?: Clock;
  signal?: AbortSignal;
  /** Environment of the launched processes (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Each journalled episode, with the counts after it. */
  onEpisode?: (record: EpisodeRecord, progress: Progress) => void;
  onProcess?: (event: ProcessEvent) => void;
  /** Each ERROR the bridge answered (a replay dropped under `repeats` included). */
  onRefusal?: (refusal: Refusal) => void;
}

export interface Progress {
  done: number;
  /** What the processes are expected to play, as far as the episodes so far tell. */
  expected: number;
  errors: number;
}

export type ProcessEvent =
  | { kind: "start"; job: LaunchJob }
  | { kind: "exit"; job: LaunchJob; exit: JobExit }
  | { kind: "preflight"; result: PreflightResult };

export interface PreflightResult {
  episodes: number;
  successes: number;
  rate: number | null;
  minCleanSuccess: number;
  passed: boolean;
}

/** Cells of one address with fewer finished episodes than the run's repeats, in vla-eval's terms. */
export interface MissingCells {
  route: string;
  task: string;
  /** vla-eval's `episode_idx` values. */
  episodes: number[];
  /** Shards of this address whose process did not exit 0 (vla-eval's `--shard-id`). */
  shards: number[];
}

export interface ProcessRecord {
  id: string;
  route: string;
  shard: number;
  repeat: number;
  command: string;
  log: string;
  /** Exit code of its last launch; null while unknown (never ended, or ended by a signal). */
  code: number | null;
  signal: string | null;
  tail: string[];
}

export interface BenchmarkRunResult {
  out: string;
  report: Report;
  reportDigest: string;
  verdict: FinishResult["verdict"];
  /** Episodes journalled by this invocation. */
  played: number;
  /** Replays of finished episodes refused by this invocation. */
  dropped: number;
  processes: ProcessRecord[];
  missing: MissingCells[];
  preflight: PreflightResult | null;
  /** Stopped by the signal before every process ended. */
  interrupted: boolean;
}

type FinishResult = Awaited<ReturnType<typeof completeOutputs>>;

interface LaunchFile {
  processes: ProcessRecord[];
  /** Per invocation: replays dropped. */
  sessions: { dropped: number; played: number }[];
  preflight: PreflightResult | null;
}

const jobId = (route: string, shard: number, shards: number, repeat: number, repeats: number) =>
  [
    route,
    ...(shards > 1 ? [`shard${shard}of${shards}`] : []),
    ...(repeats > 1 ? [`r${repeat}`] : []),
  ].join(".");

function readLaunch(out: string): LaunchFile | null {
  const path = join(out, LAUNCH_FILE);
  if (!existsSync(path)) return null;
  return JSON.parse(readFileSync(path, "utf8")) as LaunchFile;
}

/** Checks the template and the benchmark file before the bridge starts. */
export function checkBenchmarkCommand(command: string, config: string | undefined): void {
  templatePlaceholders(command);
  expandCommand(command, {
    ...(config !== undefined ? { config } : {}),
    url: "ws://127.0.0.1:1/arms/none",
    arm: "none",
    shard: 0,
    num_shards: 1,
  });
  if (config !== undefined && !existsSync(config)) {
    throw new ProvaelError("config/invalid", `--benchmark ${config}: no such file`, {
      hint: "pass the vla-eval config you would give `vla-eval run --config`",
    });
  }
}

const cellKey = (route: string, task: string, seed: number) => `${route}\u0000${task}\u0000${seed}`;
const routeOf = (r: EpisodeRecord) => routeName(r.arm, r.defenses ?? []);

export async function runBenchmarkAttack(o: BenchmarkRunOptions): Promise<BenchmarkRunResult> {
  checkBenchmarkCommand(o.command, o.config);
  const clock = o.clock ?? systemClock;
  const records: EpisodeRecord[] = [];
  let played = 0;
  let errors = 0;
  const seen = new Set<string>();
  const benign = routeName(
    o.bridge.arms.includes("none") ? "none" : (o.bridge.arms[0] as string),
    [],
  );
  let routes: string[] = [];
  const progress = (): Progress => ({
    done: records.length,
    expected: Math.max(records.length, seen.size * routes.length * o.repeats),
    errors,
  });
  // Preflight: decided once enough benign episodes finished (or the benign processes ended).
  let preflightDecide: (() => void) | null = null;
  const benignDone = () =>
    records.filter((r) => routeOf(r) === benign && r.error === null && !r.not_applicable_reason);
  const bridge = await startBridge({
    ...o.bridge,
    host: "127.0.0.1",
    port: 0,
    out: o.out,
    resume: o.resume,
    repeats: o.repeats,
    clock,
    commandLine: o.commandLine,
    onEvent: (event) => {
      if (event.type === "refusal") {
        o.onRefusal?.(event.refusal);
        return;
      }
      const r = event.record;
      records.push(r);
      played += 1;
      if (r.error !== null) errors += 1;
      seen.add(`${r.task}\u0000${r.seed}`);
      o.onEpisode?.(r, progress());
      if (routeOf(r) === benign) preflightDecide?.();
    },
  });
  routes = Object.keys(bridge.armUrls);
  const launchDir = join(o.out, LAUNCH_DIR);
  mkdirSync(launchDir, { recursive: true });
  const before = o.resume ? readLaunch(o.out) : null;
  // A resumed run's journal: its episodes count towards progress and completeness.
  for (const r of previousRecords(o.out, o.resume)) {
    records.push(r);
    seen.add(`${r.task}\u0000${r.seed}`);
  }
  const ok = new Set((before?.processes ?? []).filter((p) => p.code === 0).map((p) => p.id));
  const processes = new Map<string, ProcessRecord>(
    (before?.processes ?? []).map((p) => [p.id, p] as const),
  );
  const jobs: (LaunchJob & { route: string })[] = [];
  for (const route of routes) {
    for (let repeat = 0; repeat < o.repeats; repeat++) {
      for (let shard = 0; shard < o.shards; shard++) {
        const id = jobId(route, shard, o.shards, repeat, o.repeats);
        const command = expandCommand(o.command, {
          ...(o.config !== undefined ? { config: o.config } : {}),
          url: bridge.armUrls[route] as string,
          arm: route,
          shard,
          num_shards: o.shards,
        });
        const log = join(launchDir, `${id}.log`);
        if (!processes.has(id) || !ok.has(id))
          processes.set(id, {
            id,
            route,
            shard,
            repeat,
            command,
            log: join(LAUNCH_DIR, `${id}.log`),
            code: null,
            signal: null,
            tail: [],
          });
        if (!ok.has(id)) jobs.push({ id, command, log, route });
      }
    }
  }
  const save = (preflight: PreflightResult | null) => {
    const file: LaunchFile = {
      processes: [...processes.values()],
      sessions: [...(before?.sessions ?? []), { dropped: bridge.dropped(), played }],
      preflight: preflight ?? before?.preflight ?? null,
    };
    writeFileAtomic(join(o.out, LAUNCH_FILE), `${JSON.stringify(file, null, 2)}\n`);
  };
  save(null);

  const pool = new JobPool({
    concurrency: o.concurrency,
    ...(o.env ? { env: o.env } : {}),
    onStart: (job) => o.onProcess?.({ kind: "start", job }),
    onExit: (exit) => {
      const p = processes.get(exit.id);
      if (p) Object.assign(p, { code: exit.code, signal: exit.signal, tail: exit.tail });
      save(null);
      const job = jobs.find((j) => j.id === exit.id) as LaunchJob;
      o.onProcess?.({ kind: "exit", job, exit });
      if ((jobs.find((j) => j.id === exit.id) as { route: string }).route === benign)
        preflightDecide?.();
    },
  });
  const onAbort = () => pool.stop();
  o.signal?.addEventListener("abort", onAbort, { once: true });
  let preflight: PreflightResult | null = null;
  try {
    const benignJobs = jobs.filter((j) => j.route === benign);
    const others = jobs.filter((j) => j.route !== benign);
    if (o.preflight.episodes > 0 && before?.preflight?.passed !== true) {
      // The benign arm alone first, until its preflight episodes are in.
      pool.add(benignJobs);
      preflight = await new Promise<PreflightResult>((resolve) => {
        preflightDecide = () => {
          const done = benignDone();
          const running = benignJobs.some((j) => pool.active(j.id));
          if (done.length < o.preflight.episodes && running && !o.signal?.aborted) return;
          const shown = done.slice(0, o.preflight.episodes);
          const successes = shown.filter((r) => r.task_success === true).length;
          const rate = shown.length > 0 ? successes / shown.length : null;
          preflightDecide = null;
          resolve({
            episodes: shown.length,
            successes,
            rate,
            minCleanSuccess: o.preflight.minCleanSuccess,
            passed: rate !== null && rate >= o.preflight.minCleanSuccess,
          });
        };
        preflightDecide();
      });
      o.onProcess?.({ kind: "preflight", result: preflight });
      save(preflight);
      if (!preflight.passed) pool.stop();
      else pool.add(others);
    } else pool.add([...benignJobs, ...others]);
    pool.seal();
    await pool.finished();
  } finally {
    o.signal?.removeEventListener("abort", onAbort);
  }
  const interrupted = Boolean(o.signal?.aborted);
  const closed = await bridge.close();
  save(preflight);
  const outputs = await completeOutputs(o.out, closed.report, closed.reportDigest, o.finish, {
    benchmark: {
      command: o.command,
      processes: [...processes.values()].map(({ id, code, signal }) => ({ id, code, signal })),
      dropped_replays: bridge.dropped(),
      ...(preflight ? { preflight } : {}),
    },
  });
  return {
    out: o.out,
    report: closed.report,
    reportDigest: closed.reportDigest,
    verdict: outputs.verdict,
    played,
    dropped: bridge.dropped(),
    processes: [...processes.values()],
    missing: missingCells(closed.report, routes, o.repeats, [...processes.values()]),
    preflight,
    interrupted,
  };
}

/** The episodes a resumed run's journal held before this invocation. */
function previousRecords(out: string, resume: boolean): EpisodeRecord[] {
  if (!resume) return [];
  const path = join(out, RUN_FILES.journal);
  const lines = readFileSync(path, "utf8").split("\n").slice(1);
  const recs: EpisodeRecord[] = [];
  for (const l of lines) {
    if (l.trim() === "") continue;
    try {
      const e = JSON.parse(l) as { type?: string; record?: EpisodeRecord };
      if (e.type === "episode" && e.record) recs.push(e.record);
    } catch {
      // A torn last line: the journal's reader dropped it too.
    }
  }
  return recs;
}

/**
 * The cells some address lacks: every (task, episode) any address finished is expected of all,
 * `repeats` times each. Listed per address and task with the episode indices, and the shards
 * whose process did not exit 0.
 */
export function missingCells(
  report: Report,
  routes: readonly string[],
  repeats: number,
  processes: readonly ProcessRecord[],
): MissingCells[] {
  const good = new Map<string, number>();
  const pairs = new Map<string, { task: string; seed: number }>();
  for (const e of report.episodes) {
    pairs.set(`${e.task}\u0000${e.seed}`, { task: e.task, seed: e.seed });
    if (e.error !== null) continue;
    const route = routeName(e.arm, (e as { defenses?: string[] }).defenses ?? []);
    const k = cellKey(route, e.task, e.seed);
    good.set(k, (good.get(k) ?? 0) + 1);
  }
  const out: MissingCells[] = [];
  const sorted = [...pairs.values()].sort((a, b) =>
    a.task === b.task ? a.seed - b.seed : a.task < b.task ? -1 : 1,
  );
  for (const route of routes) {
    const byTask = new Map<string, number[]>();
    for (const { task, seed } of sorted) {
      if ((good.get(cellKey(route, task, seed)) ?? 0) >= repeats) continue;
      byTask.set(task, [...(byTask.get(task) ?? []), seed]);
    }
    const shards = [
      ...new Set(processes.filter((p) => p.route === route && p.code !== 0).map((p) => p.shard)),
    ].sort((a, b) => a - b);
    for (const [task, episodes] of byTask) out.push({ route, task, episodes, shards });
  }
  return out;
}

/** "0-3, 7" for episode indices. */
export function ranges(xs: readonly number[]): string {
  const parts: string[] = [];
  let i = 0;
  while (i < xs.length) {
    let j = i;
    while (j + 1 < xs.length && (xs[j + 1] as number) === (xs[j] as number) + 1) j++;
    parts.push(i === j ? String(xs[i]) : `${xs[i]}-${xs[j]}`);
    i = j + 1;
  }
  return parts.join(", ");
}
