/**
 * Signed attestations of a run: an in-toto Statement v1 whose subject is `report.json` (by its
 * SHA-256) and whose predicate summarises the run, wrapped in a DSSE envelope signed with
 * Ed25519. Evidence, not certification: it proves who vouched for which bytes, not that the
 * policy is safe.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { canonicalJson } from "../core/canonical-json.js";
import type { Clock } from "../core/clock.js";
import { sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import { TOOL_VERSION } from "../core/package-root.js";
import type { Report } from "../report/build.js";
import { rateSchema, reportSchema } from "../report/schema.js";
import { RUN_FILES } from "../rundir/files.js";
import { readReportBytes, readReportFile } from "../rundir/report.js";
import {
  type Envelope,
  IN_TOTO_PAYLOAD_TYPE,
  parseEnvelope,
  signEnvelope,
  verifyEnvelope,
} from "./dsse.js";
import { decodeUtf8, MAX_REPORT_BYTES, parseJson, readEvidenceFile } from "./files.js";
import type { KeyPair } from "./keys.js";
import { type TrustedKey, windowProblem } from "./trust-store.js";

export const STATEMENT_TYPE = "https://in-toto.io/Statement/v1";
export const REDTEAM_PREDICATE_TYPE = "https://provael.dev/attestation/redteam/v1";
export const DISCLAIMER = "evidence, not certification";

const hex64 = z.string().regex(/^[0-9a-f]{64}$/, "a sha256 digest is 64 lowercase hex digits");

/** An in-toto Statement v1 with a predicate of type T. */
export function statementSchema<T extends z.ZodType>(predicateType: string, predicate: T) {
  return z
    .object({
      _type: z.literal(STATEMENT_TYPE),
      subject: z
        .array(z.object({ name: z.string(), digest: z.record(z.string(), z.string()) }).strict())
        .min(1),
      predicateType: z.literal(predicateType),
      predicate,
    })
    .strict();
}

export const redteamPredicateSchema = z
  .object({
    disclaimer: z.literal(DISCLAIMER),
    attested_at: z.iso.datetime({ offset: true }),
    tool: z.object({ name: z.literal("provael"), version: z.string() }).strict(),
    report: z.object({ schema: z.string(), tool_version: z.string(), digest: z.string() }).strict(),
    protocol: z.string(),
    run: reportSchema.shape.run,
    policy_digest: z.string().nullable(),
    summary: reportSchema.shape.summary,
    arms: z.record(
      z.string(),
      z
        .object({
          role: z.string(),
          family: z.string(),
          eai: z.string().nullable(),
          unsafe: rateSchema,
        })
        .strict(),
    ),
    calibration: reportSchema.shape.calibration,
    trajectories_digest: z.string(),
    manifest: z
      .object({ digest: z.string(), plan_digest: z.string().nullable() })
      .strict()
      .nullable(),
    // The acceptance verdict, as the execution manifest records it; null when none was decided.
    verdict: z.unknown().nullable(),
  })
  .strict();

export type RedteamPredicate = z.infer<typeof redteamPredicateSchema>;
const redteamStatementSchema = statementSchema(REDTEAM_PREDICATE_TYPE, redteamPredicateSchema);
export type RedteamStatement = z.infer<typeof redteamStatementSchema>;

export interface RunFiles {
  report: Report;
  reportBytes: Uint8Array;
  /** The execution manifest, parsed, and its bytes; null when the run has none. */
  manifest: { value: Record<string, unknown>; bytes: Uint8Array } | null;
}

/** Reads what an attestation covers from a run directory. */
export function readRunFiles(dir: string): RunFiles {
  const reportPath = join(dir, RUN_FILES.report);
  if (!existsSync(reportPath)) {
    throw new ProvaelError("run/not-found", `${dir} holds no Provael run (no report.json)`, {
      hint: "pass the --out directory of a finished `provael attack`",
    });
  }
  const { report, bytes: reportBytes } = readReportFile(reportPath, reportPath, {
    maxBytes: MAX_REPORT_BYTES,
  });
  const manifestPath = join(dir, RUN_FILES.manifest);
  let manifest: RunFiles["manifest"] = null;
  if (existsSync(manifestPath)) {
    const bytes = readEvidenceFile(manifestPath, "execution manifest");
    const value = parseJson(decodeUtf8(bytes, manifestPath), manifestPath);
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw new ProvaelError("io/malformed", `${manifestPath} is not a JSON object`);
    }
    manifest = { value: value as Record<string, unknown>, bytes };
  }
  return { report, reportBytes, manifest };
}

const hexOf = (d: string) => d.slice("sha256:".length);

/** The statement for a run; `attestedAt` is an ISO 8601 time. */
export function buildRedteamStatement(files: RunFiles, attestedAt: string): RedteamStatement {
  const { report, manifest } = files;
  const arms: RedteamPredicate["arms"] = {};
  for (const name of report.run.arms) {
    const a = report.arms[name];
    if (a) arms[name] = { role: a.role, family: a.family, eai: a.eai, unsafe: a.unsafe };
  }
  const planDigest = manifest?.value.plan_digest;
  return {
    _type: STATEMENT_TYPE,
    subject: [{ name: RUN_FILES.report, digest: { sha256: hexOf(sha256(files.reportBytes)) } }],
    predicateType: REDTEAM_PREDICATE_TYPE,
    predicate: {
      disclaimer: DISCLAIMER,
      attested_at: attestedAt,
      tool: { name: "provael", version: TOOL_VERSION },
      report: {
        schema: report.schema,
        tool_version: report.tool_version,
        digest: sha256(files.reportBytes),
      },
      protocol: report.protocol,
      run: report.run as RedteamPredicate["run"],
      policy_digest: report.run.policy_digest,
      summary: report.summary,
      arms,
      calibration: report.calibration,
      trajectories_digest: report.trajectories_digest,
      manifest:
        manifest === null
          ? null
          : {
              digest: sha256(manifest.bytes),
              plan_digest: typeof planDigest === "string" ? planDigest : null,
            },
      verdict: manifest?.value.verdict ?? null,
    },
  };
}

/** Signs a statement into a DSSE envelope over its canonical JSON. */
export function signStatement(statement: unknown, key: KeyPair): Envelope {
  return signEnvelope(IN_TOTO_PAYLOAD_TYPE, Buffer.from(canonicalJson(statement), "utf8"), key);
}

/** Attests the run in `dir`: reads it, builds the statement and signs it. */
export function attestRun(dir: string, key: KeyPair, clock: Clock): Envelope {
  const files = readRunFiles(dir);
  return signStatement(buildRedteamStatement(files, new Date(clock.now()).toISOString()), key);
}

/** Writes an envelope as indented JSON. */
export function writeEnvelope(path: string, envelope: Envelope): void {
  try {
    writeFileSync(path, `${JSON.stringify(envelope, null, 2)}\n`);
  } catch (e) {
    throw new ProvaelError("io/write", `cannot write ${path}: ${(e as Error).message}`, {
      cause: e,
    });
  }
}

/** Parses a verified body as a statement of the given schema; a signed but invalid body is malformed. */
export function parseStatement<T extends z.ZodType>(body: Uint8Array, schema: T, what: string) {
  const value = parseJson(decodeUtf8(body, `${what} payload`), `${what} payload`);
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const type =
      value !== null && typeof value === "object" && "predicateType" in value
        ? String((value as { predicateType: unknown }).predicateType)
        : "?";
    throw new ProvaelError(
      "evidence/malformed",
      `${what} payload is not a valid statement (predicateType ${type}) at ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}`,
    );
  }
  return parsed.data as z.infer<T>;
}

export interface VerifiedAttestation {
  statement: RedteamStatement;
  keyid: string;
  keyLabel: string | null;
  /** The report digest the statement names, as `sha256:<hex>`. */
  subjectDigest: string;
  /** True when report bytes were given and matched the subject. */
  reportChecked: boolean;
}

/** The subject named report.json and its SHA-256, or a subject-mismatch error. */
export function reportSubject(
  statement: { subject: { name: string; digest: Record<string, string> }[] },
  what: string,
): string {
  const subject = statement.subject.find((s) => s.name === RUN_FILES.report);
  const hex = subject?.digest.sha256;
  if (subject === undefined || hex === undefined || !hex64.safeParse(hex).success) {
    throw new ProvaelError(
      "evidence/subject-mismatch",
      `${what} does not name a report.json by its sha256 digest`,
    );
  }
  return `sha256:${hex}`;
}

/**
 * Verifies attestation bytes: envelope shape, signature, key trust and window, statement shape,
 * and, when `reportBytes` are given, that they are the attested report. A report whose run
 * differs from the attested one is a subject mismatch; the same run with other bytes is a digest
 * mismatch.
 */
export function verifyAttestationBytes(
  bytes: Uint8Array,
  trusted: readonly TrustedKey[],
  options: { now: number; reportBytes?: Uint8Array; what?: string },
): VerifiedAttestation {
  const what = options.what ?? "the attestation";
  const envelope = parseEnvelope(parseJson(decodeUtf8(bytes, what), what), what);
  const { body, key } = verifyEnvelope(envelope, trusted, {
    payloadType: IN_TOTO_PAYLOAD_TYPE,
    now: options.now,
    what,
  });
  const statement = parseStatement(body, redteamStatementSchema, what);
  const problem = windowProblem(key, statement.predicate.attested_at, options.now);
  if (problem !== null) {
    throw new ProvaelError("evidence/untrusted-key", `${what} cannot be trusted: ${problem}`, {
      details: { keyid: key.keyid },
    });
  }
  const subjectDigest = reportSubject(statement, what);
  if (options.reportBytes !== undefined) {
    const actual = sha256(options.reportBytes);
    if (actual !== subjectDigest) {
      const differentRun = runOf(options.reportBytes);
      if (
        differentRun !== null &&
        canonicalJson(differentRun) !==
          canonicalJson({
            run: statement.predicate.run,
            trajectories_digest: statement.predicate.trajectories_digest,
          })
      ) {
        throw new ProvaelError(
          "evidence/subject-mismatch",
          `the report is of another run than the one attested (${differentRun.run.policy} on ${differentRun.run.suite} vs ${statement.predicate.run.policy} on ${statement.predicate.run.suite})`,
          {
            details: { attested: subjectDigest, actual },
            hint: "pass --report the run directory the attestation was made for",
          },
        );
      }
      throw new ProvaelError(
        "evidence/digest-mismatch",
        `report.json has changed since it was attested: ${actual} is not the attested ${subjectDigest}`,
        { details: { attested: subjectDigest, actual } },
      );
    }
  }
  return {
    statement,
    keyid: key.keyid,
    keyLabel: key.label,
    subjectDigest,
    reportChecked: options.reportBytes !== undefined,
  };
}

/** The run identity of report bytes, or null when they do not parse as one. */
function runOf(bytes: Uint8Array): { run: Report["run"]; trajectories_digest: string } | null {
  try {
    const value = JSON.parse(Buffer.from(bytes).toString("utf8")) as Report;
    if (typeof value !== "object" || value === null || typeof value.run !== "object") return null;
    if (typeof value.run?.policy !== "string" || typeof value.run.suite !== "string") return null;
    return { run: value.run, trajectories_digest: value.trajectories_digest };
  } catch {
    return null;
  }
}

/** Verifies an attestation file, optionally against the report.json of a run directory. */
export function verifyAttestationFile(
  path: string,
  trusted: readonly TrustedKey[],
  options: { now: number; reportDir?: string },
): VerifiedAttestation {
  const bytes = readEvidenceFile(path, "attestation");
  let reportBytes: Uint8Array | undefined;
  if (options.reportDir !== undefined) {
    const reportPath = join(options.reportDir, RUN_FILES.report);
    if (!existsSync(reportPath)) {
      throw new ProvaelError("run/not-found", `${options.reportDir} holds no report.json`, {
        hint: "pass --report the run directory the attestation was made for",
      });
    }
    reportBytes = readReportBytes(reportPath, `report ${reportPath}`, MAX_REPORT_BYTES);
  }
  return verifyAttestationBytes(bytes, trusted, {
    now: options.now,
    what: path,
    ...(reportBytes === undefined ? {} : { reportBytes }),
  });
}

/**
 * Whether an attestation file names these report bytes, without checking its signature (the
 * compliance map only records that one exists; `provael verify` checks it).
 */
export function inspectAttestation(
  path: string,
  reportBytes: Uint8Array,
): { present: boolean; detail: string } {
  try {
    const bytes = readEvidenceFile(path, "attestation");
    const envelope = parseEnvelope(parseJson(decodeUtf8(bytes, path), path), path);
    const body = Buffer.from(envelope.payload, "base64");
    const statement = parseStatement(body, redteamStatementSchema, path);
    const digest = reportSubject(statement, path);
    if (digest !== sha256(reportBytes)) {
      return { present: false, detail: `${path} attests another report (${digest})` };
    }
    if (envelope.signatures.length === 0) {
      return { present: false, detail: `${path} names this report but carries no signature` };
    }
    return {
      present: true,
      detail: `${path} names this report, signed by ${envelope.signatures.map((s) => s.keyid ?? "?").join(", ")} (signature not checked here: run \`provael verify\`)`,
    };
  } catch (e) {
    return {
      present: false,
      detail: `${path} is not a usable attestation: ${(e as Error).message}`,
    };
  }
}
