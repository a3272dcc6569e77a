/**
 * The leaderboard: unsafe rates per (policy, suite, family) pooled over finished runs, each with
 * its Wilson interval, the benign floor of that policy and suite, and how strong the evidence is.
 * `leaderboard.json` is canonical JSON with no clock value, so rebuilding it from the same runs
 * gives the same bytes; a signature, when asked for, goes beside it.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { z } from "zod";
import { canonicalJson } from "../core/canonical-json.js";
import type { Clock } from "../core/clock.js";
import { digestJson, sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import { TOOL_VERSION } from "../core/package-root.js";
import { describeIssues } from "../core/zod-issues.js";
import type { Report } from "../report/build.js";
import { wilsonInterval } from "../stats/index.js";
import {
  DISCLAIMER,
  parseStatement,
  readRunFiles,
  STATEMENT_TYPE,
  signStatement,
  statementSchema,
  writeEnvelope,
} from "./attestation.js";
import { IN_TOTO_PAYLOAD_TYPE, parseEnvelope, verifyEnvelope } from "./dsse.js";
import { decodeUtf8, parseJson, readEvidenceFile } from "./files.js";
import type { KeyPair } from "./keys.js";
import { renderLeaderboardHtml } from "./leaderboard-html.js";
import { type TrustedKey, windowProblem } from "./trust-store.js";

export const LEADERBOARD_SCHEMA = "provael.leaderboard/1";
export const LEADERBOARD_PREDICATE_TYPE = "https://provael.dev/attestation/leaderboard/v1";
export const LEADERBOARD_FILES = {
  json: "leaderboard.json",
  html: "index.html",
  signature: "leaderboard.dsse.json",
} as const;

const CONFIDENCE = 0.95;

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
  "served-policy": "a served or exported model (openpi, openvla, vla-eval, onnx) in simulation",
  "simulator-own-policy": "Provael's own policies in a built-in MuJoCo suite",
  "stub-fixture": "the scalar stub suite: tests the wiring, says nothing about a real policy",
  unclassified: "a policy or suite Provael does not classify",
};

const SERVED_POLICIES = new Set(["openpi", "openvla", "vla-eval", "onnx"]);
const OWN_POLICIES = new Set(["stub", "scripted", "tiny-vla"]);
const MUJOCO_SUITES = new Set(["reach", "tabletop"]);

export function evidenceLevel(policy: string, suite: string): EvidenceLevel {
  if (suite === "stub") return "stub-fixture";
  if (SERVED_POLICIES.has(policy)) return "served-policy";
  if (MUJOCO_SUITES.has(suite) && OWN_POLICIES.has(policy)) return "simulator-own-policy";
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
  const manifest = join(dir, "execution-manifest.json");
  if (existsSync(manifest)) {
    try {
      const m = JSON.parse(readFileSync(manifest, "utf8")) as { command_line?: unknown };
      if (Array.isArray(m.command_line) && m.command_line.slice(0, 3).includes("calibrate"))
        return true;
    } catch {
      // An unreadable manifest says nothing either way; the folder test below still applies.
    }
  }
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
            confidence: CONFIDENCE,
            ...wilsonInterval(successes, n, { confidence: CONFIDENCE }),
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
    if (existsSync(join(dir, "report.json"))) {
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
export function buildLeaderboard(runs: readonly RunInput[]): Leaderboard {
  const sorted = [...runs].sort((a, b) => (a.digest < b.digest ? -1 : a.digest > b.digest ? 1 : 0));
  interface Acc {
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
      policy: report.run.policy,
      suite: report.run.suite,
      plan,
      tasks: [...report.run.tasks].sort(),
      policyDigest: report.run.policy_digest,
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
        policy: r.policy,
        suite: r.suite,
        family: r.family,
        role: r.role,
        eai: [...r.eai].sort(),
        arms: [...r.arms].sort(),
        unsafe: pooledRate(r.s, r.n),
        baseline: floor === undefined ? null : pooledRate(floor.s, floor.n),
        evidence_level: evidenceLevel(r.policy, r.suite),
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

function compareRows(a: LeaderboardRow, b: LeaderboardRow): number {
  const k = (r: LeaderboardRow) => [
    r.suite,
    r.role === "treatment" ? "0" : "1",
    r.family,
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

/** The exact bytes of leaderboard.json. */
export function leaderboardBytes(board: Leaderboard): Buffer {
  return Buffer.from(`${canonicalJson(board)}\n`, "utf8");
}

const leaderboardPredicateSchema = z
  .object({
    disclaimer: z.literal(DISCLAIMER),
    attested_at: z.iso.datetime({ offset: true }),
    tool: z.object({ name: z.literal("provael"), version: z.string() }).strict(),
    inputs_digest: z.string(),
    rows: z.number().int(),
  })
  .strict();

const leaderboardStatementSchema = statementSchema(
  LEADERBOARD_PREDICATE_TYPE,
  leaderboardPredicateSchema,
);

export interface WrittenLeaderboard {
  dir: string;
  files: string[];
  inputsDigest: string;
  keyid: string | null;
}

/** Writes leaderboard.json and index.html, and the DSSE signature when a key is given. */
export function writeLeaderboard(
  dir: string,
  board: Leaderboard,
  options: { key?: KeyPair; clock: Clock },
): WrittenLeaderboard {
  const json = leaderboardBytes(board);
  const html = Buffer.from(renderLeaderboardHtml(board), "utf8");
  const files: string[] = [LEADERBOARD_FILES.json, LEADERBOARD_FILES.html];
  let keyid: string | null = null;
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, LEADERBOARD_FILES.json), json);
    writeFileSync(join(dir, LEADERBOARD_FILES.html), html);
    if (options.key) {
      const statement = {
        _type: STATEMENT_TYPE,
        subject: [
          { name: LEADERBOARD_FILES.json, digest: { sha256: sha256(json).slice(7) } },
          { name: LEADERBOARD_FILES.html, digest: { sha256: sha256(html).slice(7) } },
        ],
        predicateType: LEADERBOARD_PREDICATE_TYPE,
        predicate: {
          disclaimer: DISCLAIMER,
          attested_at: new Date(options.clock.now()).toISOString(),
          tool: { name: "provael", version: TOOL_VERSION },
          inputs_digest: board.inputs_digest,
          rows: board.rows.length,
        },
      };
      const envelope = signStatement(statement, options.key);
      writeEnvelope(join(dir, LEADERBOARD_FILES.signature), envelope);
      keyid = envelope.signatures[0]?.keyid ?? null;
      files.push(LEADERBOARD_FILES.signature);
    }
  } catch (e) {
    if (e instanceof ProvaelError) throw e;
    throw new ProvaelError(
      "io/write",
      `cannot write the leaderboard to ${dir}: ${(e as Error).message}`,
      {
        cause: e,
      },
    );
  }
  return { dir, files, inputsDigest: board.inputs_digest, keyid };
}

export interface LeaderboardCheck {
  board: Leaderboard;
  /** Keyid of the verified signature, null when unsigned or not checked. */
  keyid: string | null;
  /** Keyid of a signature present but not checked (no key given). */
  unverifiedKeyid: string | null;
  rebuiltFromRuns: boolean;
}

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-12;

/** Rows whose rate or interval does not follow from their counts. */
function inconsistentRows(board: Leaderboard): string[] {
  const bad: string[] = [];
  for (const r of board.rows) {
    for (const [label, rate] of [
      ["unsafe", r.unsafe],
      ["baseline", r.baseline],
    ] as const) {
      if (rate === null) continue;
      const expected = pooledRate(rate.successes, Math.max(rate.n, rate.successes));
      const ok =
        rate.successes <= rate.n &&
        (rate.rate === null) === (expected.rate === null) &&
        (rate.rate === null || close(rate.rate, expected.rate as number)) &&
        (rate.interval === null) === (expected.interval === null) &&
        (rate.interval === null ||
          (close(rate.interval.low, expected.interval?.low as number) &&
            close(rate.interval.high, expected.interval?.high as number) &&
            rate.interval.confidence === CONFIDENCE));
      if (!ok) bad.push(`${r.policy}/${r.suite}/${r.family} ${label}`);
    }
  }
  return bad;
}

/**
 * Verifies a leaderboard directory: the JSON is canonical and self-consistent, index.html is the
 * page it renders to, the signature (when a key is given) covers both, and, when runs are given,
 * rebuilding from them gives the same bytes.
 */
export function verifyLeaderboardDir(
  dir: string,
  options: { trusted?: readonly TrustedKey[]; now: number; runs?: readonly string[] },
): LeaderboardCheck {
  const jsonPath = join(dir, LEADERBOARD_FILES.json);
  const bytes = readEvidenceFile(jsonPath, "leaderboard");
  const text = decodeUtf8(bytes, jsonPath);
  const parsed = leaderboardSchema.safeParse(parseJson(text, jsonPath));
  if (!parsed.success) {
    throw new ProvaelError(
      "evidence/malformed",
      `${jsonPath} is not a Provael leaderboard at ${describeIssues(parsed.error)}`,
    );
  }
  const board = parsed.data;
  if (leaderboardBytes(board).compare(bytes) !== 0) {
    throw new ProvaelError(
      "evidence/malformed",
      `${jsonPath} is not in canonical form (RFC 8785 JSON and one newline)`,
      { hint: "rebuild it with `provael leaderboard build` instead of editing it" },
    );
  }
  const bad = inconsistentRows(board);
  if (bad.length > 0) {
    throw new ProvaelError(
      "evidence/malformed",
      `${jsonPath}: rates or intervals do not follow from the counts (${bad.join("; ")})`,
    );
  }
  if (inputsDigest(board.inputs.map((i) => i.digest)) !== board.inputs_digest) {
    throw new ProvaelError(
      "evidence/digest-mismatch",
      `${jsonPath}: inputs_digest is not the digest of the listed inputs`,
    );
  }
  const htmlPath = join(dir, LEADERBOARD_FILES.html);
  const htmlBytes = existsSync(htmlPath) ? readEvidenceFile(htmlPath, "leaderboard page") : null;
  if (htmlBytes !== null && htmlBytes.toString("utf8") !== renderLeaderboardHtml(board)) {
    throw new ProvaelError(
      "evidence/digest-mismatch",
      `${htmlPath} is not the page leaderboard.json renders to`,
      { hint: "rebuild it with `provael leaderboard build`" },
    );
  }

  let keyid: string | null = null;
  let unverifiedKeyid: string | null = null;
  const sigPath = join(dir, LEADERBOARD_FILES.signature);
  const hasSig = existsSync(sigPath);
  if (options.trusted !== undefined) {
    if (!hasSig) {
      throw new ProvaelError("evidence/unsigned", `${dir} has no ${LEADERBOARD_FILES.signature}`, {
        hint: "build it with `provael leaderboard build --sign --key private.pem`",
      });
    }
    const sigBytes = readEvidenceFile(sigPath, "leaderboard signature");
    const envelope = parseEnvelope(parseJson(decodeUtf8(sigBytes, sigPath), sigPath), sigPath);
    const verified = verifyEnvelope(envelope, options.trusted, {
      payloadType: IN_TOTO_PAYLOAD_TYPE,
      now: options.now,
      what: sigPath,
    });
    const statement = parseStatement(verified.body, leaderboardStatementSchema, sigPath);
    const problem = windowProblem(verified.key, statement.predicate.attested_at, options.now);
    if (problem !== null) {
      throw new ProvaelError("evidence/untrusted-key", `${sigPath} cannot be trusted: ${problem}`);
    }
    const subject = (name: string) => statement.subject.find((s) => s.name === name)?.digest.sha256;
    const jsonSubject = subject(LEADERBOARD_FILES.json);
    if (jsonSubject === undefined || statement.predicate.inputs_digest !== board.inputs_digest) {
      throw new ProvaelError(
        "evidence/subject-mismatch",
        `${sigPath} is about another leaderboard (inputs ${statement.predicate.inputs_digest})`,
      );
    }
    if (`sha256:${jsonSubject}` !== sha256(bytes)) {
      throw new ProvaelError(
        "evidence/digest-mismatch",
        `${jsonPath} has changed since it was signed`,
      );
    }
    const htmlSubject = subject(LEADERBOARD_FILES.html);
    if (
      htmlSubject !== undefined &&
      htmlBytes !== null &&
      `sha256:${htmlSubject}` !== sha256(htmlBytes)
    ) {
      throw new ProvaelError(
        "evidence/digest-mismatch",
        `${htmlPath} has changed since it was signed`,
      );
    }
    keyid = verified.key.keyid;
  } else if (hasSig) {
    try {
      const env = parseEnvelope(
        parseJson(decodeUtf8(readEvidenceFile(sigPath, "leaderboard signature"), sigPath), sigPath),
        sigPath,
      );
      unverifiedKeyid = env.signatures[0]?.keyid ?? null;
    } catch {
      unverifiedKeyid = null;
    }
  }

  if (options.runs !== undefined) {
    const rebuilt = buildLeaderboard(readRuns(options.runs));
    if (rebuilt.inputs_digest !== board.inputs_digest) {
      throw new ProvaelError(
        "evidence/subject-mismatch",
        `the runs given (inputs ${rebuilt.inputs_digest}) are not the ones this leaderboard was built from (${board.inputs_digest})`,
      );
    }
    const same =
      canonicalJson({ ...rebuilt, tool_version: board.tool_version }) === canonicalJson(board);
    if (!same) {
      throw new ProvaelError(
        "evidence/digest-mismatch",
        `rebuilding from the same runs gives different rows than ${jsonPath}`,
      );
    }
  }
  return { board, keyid, unverifiedKeyid, rebuiltFromRuns: options.runs !== undefined };
}
