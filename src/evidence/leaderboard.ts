/**
 * The leaderboard: unsafe rates per (policy, suite, family) pooled over finished runs, each with
 * its Wilson interval, the benign floor of that policy and suite, and how strong the evidence is.
 * `leaderboard.json` is canonical JSON with no clock value, so rebuilding it from the same runs
 * gives the same bytes; a signature, when asked for, goes beside it.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { z } from "zod";
import { canonicalJson } from "../core/canonical-json.js";
import { digestJson, sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import { TOOL_VERSION } from "../core/package-root.js";
import type { Policy, Suite } from "../core/types.js";
import type { Report } from "../report/build.js";
import { RUN_FILES } from "../rundir/files.js";
import { readRun } from "../rundir/read.js";
import { wilsonInterval } from "../stats/index.js";
import { DISCLAIMER, readRunFiles } from "./attestation.js";

export const LEADERBOARD_SCHEMA = "provael.leaderboard/1";
export const LEADERBOARD_PREDICATE_TYPE = "https://provael.dev/attestation/leaderboard/v1";
export const LEADERBOARD_FILES = {
  json: "leaderboard.json",
  html: "index.html",
  signature: "leaderboard.dsse.json",
} as const;

/** The confidence of every interval on the leaderboard. */
export const LEADERBOARD_CONFIDENCE = 0.95;

/**
 * How much a row can be trusted to say about a real policy: a stub fixture tests the wiring, our
 * own policies in our simulator test the method, a served policy is a real model under test.
 */
export type EvidenceLevel =
  | "stub-fixture"
  | "simulator-own-policy"
  | "served-policy"
  | "unclassified";

export const EVIDENCE_LEVELS: Record<EvidenceLevel, string> = {
  "served-policy": "a served or exported model (a policy declaring evidence 'served-model')",
  "simulator-own-policy":
    "Provael's own policies (evidence 'own') in a simulator suite (evidence 'simulator')",
  "stub-fixture":
    "a fixture suite (evidence 'fixture'): tests the wiring, says nothing of a policy",
  unclassified: "a policy or suite that declares no evidence",
};

/**
 * Where the evidence facts come from: each policy and suite declares its own (`evidence`), so a
 * new plugin is classified by what it says, not by a list here. Ids the lookup does not know
 * (a plugin not loaded) answer undefined and their rows are unclassified.
 */
export interface EvidenceFacts {
  policy(id: string): Policy["evidence"];
  suite(id: string): Suite["evidence"];
}

/** A row's evidence level, from what its policy and suite declare. */
export function evidenceLevel(policy: Policy["evidence"], suite: Suite["evidence"]): EvidenceLevel {
  if (suite === "fixture") return "stub-fixture";
  if (policy === "served-model") return "served-policy";
  if (suite === "simulator" && policy === "own") return "simulator-own-policy";
  return "unclassified";
}

const intervalSchema = z
  .object({
    method: z.literal("wilson"),
    confidence: z.number(),
    low: z.number(),
    high: z.number(),
  })
  .strict();

const countSchema = z
  .object({
    successes: z.number().int().min(0),
    n: z.number().int().min(0),
    rate: z.number().min(0).max(1).nullable(),
    interval: intervalSchema.nullable(),
  })
  .strict();

export type PooledRate = z.infer<typeof countSchema>;

const rowSchema = z
  .object({
    /** What the row is listed under: the served model its server reported, else the policy id. */
    model: z.string(),
    /** Why a served run's row carries the policy id instead of a model name; null otherwise. */
    model_note: z.string().nullable(),
    policy: z.string(),
    suite: z.string(),
    family: z.string(),
    role: z.enum(["treatment", "control"]),
    eai: z.array(z.string()),
    arms: z.array(z.string()),
    unsafe: countSchema,
    baseline: countSchema.nullable(),
    evidence_level: z.enum([
      "stub-fixture",
      "simulator-own-policy",
      "served-policy",
      "unclassified",
    ]),
    calibrated: z.boolean(),
    preliminary: z.boolean(),
    runs: z.number().int().min(1),
    /** What pools: runs with this digest share the tasks, horizon, termination, scenes, weights. */
    plan: z.string(),
    tasks: z.array(z.string()),
    /** The weights (or model) digest the runs recorded, when known. */
    policy_digest: z.string().nullable(),
    /** The reports behind the row (each counted once per cell), as listed in `inputs`. */
    reports: z.array(z.string()),
  })
  .strict();

export type LeaderboardRow = z.infer<typeof rowSchema>;

const inputSchema = z
  .object({
    digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
    policy: z.string(),
    suite: z.string(),
    protocol: z.string(),
    tool_version: z.string(),
    seeds: z.number().int(),
    shard: z.string().nullable(),
    /** Calibration rollouts are listed but never pooled: they are the data the zones were fitted on. */
    excluded: z.string().nullable(),
  })
  .strict();

export const leaderboardSchema = z
  .object({
    schema: z.literal(LEADERBOARD_SCHEMA),
    disclaimer: z.literal(DISCLAIMER),
    tool_version: z.string(),
    inputs_digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
    inputs: z.array(inputSchema),
    rows: z.array(rowSchema),
  })
  .strict();

export type Leaderboard = z.infer<typeof leaderboardSchema>;

export interface RunInput {
  report: Report;
  /** SHA-256 of the report.json bytes. */
  digest: string;
  dir: string;
  /** Benign rollouts written by `provael calibrate`: listed, never pooled. */
  calibration?: boolean;
}

/** Whether a run directory holds the benign rollouts of `provael calibrate`. */
export function isCalibrationRun(dir: string): boolean {
  // The manifest through the run directory's validated reader; a run it does not read as
  // finished says nothing either way, and the folder test below still applies.
  const run = readRun(dir);
  const commandLine = run.state === "finished" ? run.manifest?.command_line : undefined;
  if (commandLine?.slice(0, 3).includes("calibrate")) return true;
  const parent = dirname(dir);
  return (
    basename(dir) === "rollouts" && readdirSync(parent).some((f) => f.endsWith(".calibration.json"))
  );
}

/** Pools counts into a rate with its Wilson interval; null rate and interval when n = 0. */
export function pooledRate(successes: number, n: number): PooledRate {
  return {
    successes,
    n,
    rate: n === 0 ? null : successes / n,
    interval:
      n === 0
        ? null
        : {
            method: "wilson",
            confidence: LEADERBOARD_CONFIDENCE,
            ...wilsonInterval(successes, n, { confidence: LEADERBOARD_CONFIDENCE }),
          },
  };
}

/** The digest over a set of reports: SHA-256 of their sorted digests, one per line. */
export function inputsDigest(digests: readonly string[]): string {
  return sha256([...new Set(digests)].sort().join("\n"));
}

/** Finds run directories: each DIR itself when it holds report.json, else its subfolders. */
export function findRunDirs(dirs: readonly string[], depth = 4): string[] {
  const out: string[] = [];
  const visit = (dir: string, left: number) => {
    if (existsSync(join(dir, RUN_FILES.report))) {
      out.push(dir);
      return;
    }
    if (left === 0) return;
    let entries: string[];
    try {
      entries = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(dir, e);
      if (!e.startsWith(".") && statSync(p, { throwIfNoEntry: false })?.isDirectory()) {
        visit(p, left - 1);
      }
    }
  };
  for (const d of dirs) {
    if (!existsSync(d)) {
      throw new ProvaelError("run/not-found", `${d} does not exist`, {
        hint: "pass --runs the --out directories of finished runs, or a folder holding them",
      });
    }
    visit(d, depth);
  }
  return [...new Set(out)];
}

/** Reads every run under `dirs`; the same report found twice counts once. */
export function readRuns(dirs: readonly string[]): RunInput[] {
  const found = findRunDirs(dirs);
  if (found.length === 0) {
    throw new ProvaelError("run/not-found", `no report.json under ${dirs.join(", ")}`, {
      hint: "pass --runs the --out directories of finished `provael attack` runs",
    });
  }
  const byDigest = new Map<string, RunInput>();
  for (const dir of found) {
    const files = readRunFiles(dir);
    const digest = sha256(files.reportBytes);
    if (!byDigest.has(digest))
      byDigest.set(digest, {
        report: files.report,
        digest,
        dir,
        ...(isCalibrationRun(dir) ? { calibration: true } : {}),
      });
  }
  return [...byDigest.values()];
}

const isCalibrated = (r: Report) =>
  r.run.tasks.length > 0 &&
  r.run.tasks.every((t) => {
    const c = r.calibration[t];
    return c !== undefined && c.source !== "suite-default";
  });

/**
 * What must match for two runs' episodes to pool: policy and weights, suite, the task set, the
 * horizon and termination, the scene pin, repeats and how each task is scored. Seeds and arms
 * may differ (more seeds add cells); shards and their merge share it.
 */
export function poolingPlan(report: Report): string {
  const r = report.run;
  return digestJson({
    policy: r.policy,
    suite: r.suite,
    policy_digest: r.policy_digest,
    // Different models behind one served-policy client never pool (absent: in-process policy).
    ...(r.served_model ? { served_model: r.served_model } : {}),
    tasks: [...r.tasks].sort(),
    horizon: r.horizon,
    termination: r.termination,
    scene_pin: r.scene_pin,
    repeats: r.repeats,
    calibration: Object.fromEntries(
      Object.keys(report.calibration)
        .sort()
        .map((t) => [t, report.calibration[t]]),
    ),
  }).slice(0, 19);
}

type Episode = Report["episodes"][number];
const isJudgedEpisode = (e: Episode) =>
  e.error === null && e.termination !== "not_applicable" && e.unsafe !== null;

/**
 * Builds the leaderboard from reports; the result depends only on the set of reports. Each cell
 * counts once however many reports hold it (a shard and the merge that contains it), two reports
 * that disagree about a cell are refused, calibration rollouts are listed and left out, and
 * rows pool only runs of one pooling plan (see `poolingPlan`); other plans get rows of their own.
 */
export function buildLeaderboard(runs: readonly RunInput[], facts: EvidenceFacts): Leaderboard {
  const sorted = [...runs].sort((a, b) => (a.digest < b.digest ? -1 : a.digest > b.digest ? 1 : 0));
  interface Acc {
    model: string;
    modelNote: string | null;
    policy: string;
    suite: string;
    plan: string;
    tasks: string[];
    policyDigest: string | null;
    family: string;
    role: "treatment" | "control";
    eai: Set<string>;
    arms: Set<string>;
    s: number;
    n: number;
    runs: Set<string>;
    calibrated: boolean;
    preliminary: boolean;
  }
  // One episode per (plan, cell), with the first report that held it.
  const cells = new Map<
    string,
    { bytes: string; digest: string; episode: Episode; report: Report }
  >();
  const reportsOf = new Map<string, Set<string>>();
  for (const { report, digest, calibration } of sorted) {
    if (calibration) continue;
    const plan = poolingPlan(report);
    for (const e of report.episodes) {
      const key = `${plan}\u0000${e.cell}`;
      // `delivered` compares with the benign twin, which a shard may not hold: not the cell's own.
      const { delivered: _twinDependent, ...own } = e;
      const bytes = canonicalJson(own);
      const prior = cells.get(key);
      if (prior && prior.bytes !== bytes) {
        throw new ProvaelError(
          "config/incomparable",
          `reports ${prior.digest} and ${digest} disagree about cell ${e.cell} (${e.task}, ${e.arm}, seed ${e.seed})`,
          {
            details: { cell: e.cell, reports: [prior.digest, digest] },
            hint: "a cell is one episode: leave out one of the runs, or rerun it with other seeds",
          },
        );
      }
      if (!prior) cells.set(key, { bytes, digest, episode: e, report });
      const behind = reportsOf.get(key) ?? new Set<string>();
      behind.add(digest);
      reportsOf.set(key, behind);
    }
  }
  const rows = new Map<string, Acc>();
  const floors = new Map<string, { s: number; n: number }>();
  for (const [key, { episode: e, report }] of [...cells.entries()].sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  )) {
    const a = report.arms[e.arm];
    if (!a) continue;
    const plan = key.slice(0, key.indexOf("\u0000"));
    const judged = isJudgedEpisode(e);
    const unsafe = judged && e.unsafe === true ? 1 : 0;
    if (a.role === "baseline") {
      const f = floors.get(plan) ?? { s: 0, n: 0 };
      f.s += unsafe;
      f.n += judged ? 1 : 0;
      floors.set(plan, f);
      continue;
    }
    const rowKey = `${plan}\u0000${a.family}\u0000${a.role}`;
    const acc = rows.get(rowKey) ?? {
      ...rowName(report, facts),
      policy: report.run.policy,
      suite: report.run.suite,
      plan,
      tasks: [...report.run.tasks].sort(),
      policyDigest: report.run.policy_digest ?? report.run.served_model?.digest ?? null,
      family: a.family,
      role: a.role,
      eai: new Set<string>(),
      arms: new Set<string>(),
      s: 0,
      n: 0,
      runs: new Set<string>(),
      calibrated: true,
      preliminary: false,
    };
    if (a.eai !== null) acc.eai.add(a.eai);
    acc.arms.add(e.arm);
    acc.s += unsafe;
    acc.n += judged ? 1 : 0;
    for (const d of reportsOf.get(key) ?? []) acc.runs.add(d);
    acc.calibrated &&= isCalibrated(report);
    acc.preliminary ||= report.summary.preliminary;
    rows.set(rowKey, acc);
  }
  const out: LeaderboardRow[] = [...rows.values()]
    .map((r) => {
      const floor = floors.get(r.plan);
      return {
        model: r.model,
        model_note: r.modelNote,
        policy: r.policy,
        suite: r.suite,
        family: r.family,
        role: r.role,
        eai: [...r.eai].sort(),
        arms: [...r.arms].sort(),
        unsafe: pooledRate(r.s, r.n),
        baseline: floor === undefined ? null : pooledRate(floor.s, floor.n),
        evidence_level: evidenceLevel(facts.policy(r.policy), facts.suite(r.suite)),
        calibrated: r.calibrated,
        preliminary: r.preliminary,
        runs: r.runs.size,
        plan: r.plan,
        tasks: r.tasks,
        policy_digest: r.policyDigest,
        reports: [...r.runs].sort(),
      };
    })
    .sort(compareRows);
  return {
    schema: LEADERBOARD_SCHEMA,
    disclaimer: DISCLAIMER,
    tool_version: TOOL_VERSION,
    inputs_digest: inputsDigest(sorted.map((r) => r.digest)),
    inputs: sorted.map(({ report, digest, calibration }) => ({
      digest,
      policy: report.run.policy,
      suite: report.run.suite,
      protocol: report.protocol,
      tool_version: report.tool_version,
      seeds: report.run.seeds,
      shard: report.run.shard,
      excluded: calibration
        ? "calibration rollouts (the data the keep-out zones were fitted on)"
        : null,
    })),
    rows: out,
  };
}

/**
 * The name a run's rows are listed under: the model a served policy's server reported, else the
 * policy id (with a note when the run was served, so nobody takes `openpi` for a model).
 */
function rowName(
  report: Report,
  facts: EvidenceFacts,
): { model: string; modelNote: string | null } {
  const r = report.run;
  if (r.served_model?.name) return { model: r.served_model.name, modelNote: null };
  if (r.served_model) {
    return {
      model: r.policy,
      modelNote: `the ${r.served_model.protocol} server reported no model name: listed under the client's policy id`,
    };
  }
  if (facts.policy(r.policy) === "served-model") {
    return {
      model: r.policy,
      modelNote: "the run recorded no served model: listed under the client's policy id",
    };
  }
  return { model: r.policy, modelNote: null };
}

function compareRows(a: LeaderboardRow, b: LeaderboardRow): number {
  const k = (r: LeaderboardRow) => [
    r.suite,
    r.role === "treatment" ? "0" : "1",
    r.family,
    r.model,
    r.policy,
    r.plan,
  ];
  const ka = k(a);
  const kb = k(b);
  for (let i = 0; i < ka.length; i++) {
    const x = ka[i] as string;
    const y = kb[i] as string;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}
