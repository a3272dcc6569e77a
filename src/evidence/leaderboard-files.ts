/**
 * The leaderboard's files: leaderboard.json (canonical bytes), index.html and the DSSE signature
 * written, and a leaderboard directory verified (canonical, self-consistent, signed, rebuildable).
 * Building the rows is leaderboard.ts; the page is leaderboard-html.ts.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { canonicalJson } from "../core/canonical-json.js";
import type { Clock } from "../core/clock.js";
import { sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import { TOOL_VERSION } from "../core/package-root.js";
import { describeIssues } from "../core/zod-issues.js";
import {
  DISCLAIMER,
  parseStatement,
  STATEMENT_TYPE,
  signStatement,
  statementSchema,
  writeEnvelope,
} from "./attestation.js";
import { IN_TOTO_PAYLOAD_TYPE, parseEnvelope, verifyEnvelope } from "./dsse.js";
import { decodeUtf8, parseJson, readEvidenceFile } from "./files.js";
import type { KeyPair } from "./keys.js";
import {
  buildLeaderboard,
  type EvidenceFacts,
  inputsDigest,
  LEADERBOARD_CONFIDENCE,
  LEADERBOARD_FILES,
  LEADERBOARD_PREDICATE_TYPE,
  type Leaderboard,
  leaderboardSchema,
  pooledRate,
  readRuns,
} from "./leaderboard.js";
import { renderLeaderboardHtml } from "./leaderboard-html.js";
import { type TrustedKey, windowProblem } from "./trust-store.js";

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
            rate.interval.confidence === LEADERBOARD_CONFIDENCE));
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
  options: {
    trusted?: readonly TrustedKey[];
    now: number;
    runs?: readonly string[];
    /** Needed with `runs`: the plugin facts the rebuilt rows are classified by. */
    facts?: EvidenceFacts;
  },
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
    if (options.facts === undefined) throw new Error("verifyLeaderboardDir: runs need facts");
    const rebuilt = buildLeaderboard(readRuns(options.runs), options.facts);
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
