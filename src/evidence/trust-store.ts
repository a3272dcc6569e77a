/**
 * Trust stores: which public keys a verifier accepts, from when to when, and which were revoked.
 * A file is validated with zod; each entry's keyid must match the key it carries.
 */
import { z } from "zod";
import { ProvaelError } from "../core/errors.js";
import { describeIssues } from "../core/zod-issues.js";
import { decodeUtf8, parseJson, readEvidenceFile } from "./files.js";
import { keyIdOf, parsePublicKeyPem } from "./keys.js";

export const TRUST_STORE_SCHEMA = "provael.trust-store/1";

const isoTime = z.iso.datetime({ offset: true });

export const trustStoreSchema = z
  .object({
    schema: z.literal(TRUST_STORE_SCHEMA).optional(),
    keys: z.array(
      z
        .object({
          keyid: z.string().regex(/^[0-9a-f]{64}$/, "a keyid is 64 lowercase hex digits"),
          label: z.string().optional(),
          publicKeyPem: z.string(),
          validFrom: isoTime,
          validUntil: isoTime.nullable(),
          revoked: z.object({ at: isoTime, reason: z.string() }).strict().optional(),
        })
        .strict(),
    ),
  })
  .strict();

export type TrustStoreFile = z.infer<typeof trustStoreSchema>;

/** A key a verifier accepts, with its window; times are ISO 8601 strings, null when open. */
export interface TrustedKey {
  keyid: string;
  publicKey: Uint8Array;
  label: string | null;
  validFrom: string | null;
  validUntil: string | null;
  revoked: { at: string; reason: string } | null;
}

/** The single key given with --pubkey: trusted without a window. */
export function trustPublicKey(pem: string, label: string): TrustedKey {
  const publicKey = parsePublicKeyPem(pem, label);
  return {
    keyid: keyIdOf(publicKey),
    publicKey,
    label,
    validFrom: null,
    validUntil: null,
    revoked: null,
  };
}

/** Validates a parsed trust store; `what` names it in errors. */
export function parseTrustStore(value: unknown, what = "the trust store"): TrustedKey[] {
  const parsed = trustStoreSchema.safeParse(value);
  if (!parsed.success) {
    throw new ProvaelError(
      "evidence/malformed",
      `${what} is invalid at ${describeIssues(parsed.error)}`,
      { hint: "see docs/evidence.md, 'Trust store'" },
    );
  }
  const seen = new Set<string>();
  return parsed.data.keys.map((k, i) => {
    let publicKey: Uint8Array;
    try {
      publicKey = parsePublicKeyPem(k.publicKeyPem, `${what} key ${i}`);
    } catch (e) {
      throw new ProvaelError("evidence/malformed", (e as Error).message, { cause: e });
    }
    if (keyIdOf(publicKey) !== k.keyid) {
      throw new ProvaelError(
        "evidence/malformed",
        `${what} key ${i}: keyid ${k.keyid} is not the SHA-256 of its public key (${keyIdOf(publicKey)})`,
      );
    }
    if (seen.has(k.keyid)) {
      throw new ProvaelError("evidence/malformed", `${what} lists key ${k.keyid} twice`);
    }
    seen.add(k.keyid);
    if (k.validUntil !== null && Date.parse(k.validUntil) < Date.parse(k.validFrom)) {
      throw new ProvaelError(
        "evidence/malformed",
        `${what} key ${k.keyid}: validUntil is before validFrom`,
      );
    }
    return {
      keyid: k.keyid,
      publicKey,
      label: k.label ?? null,
      validFrom: k.validFrom,
      validUntil: k.validUntil,
      revoked: k.revoked ?? null,
    };
  });
}

/** Reads and validates a trust store file. */
export function readTrustStore(path: string): TrustedKey[] {
  const bytes = readEvidenceFile(path, "trust store");
  return parseTrustStore(parseJson(decodeUtf8(bytes, path), path), path);
}

/**
 * Why a key may not vouch for a statement dated `attestedAt` and checked at `now`, or null when
 * it may: the statement's date must fall inside the key's window, and the key must already be
 * valid now.
 */
export function windowProblem(key: TrustedKey, attestedAt: string, now: number): string | null {
  const at = Date.parse(attestedAt);
  if (key.validFrom !== null) {
    const from = Date.parse(key.validFrom);
    if (at < from) return `it was signed at ${attestedAt}, before key ${key.keyid} became valid`;
    if (now < from) return `key ${key.keyid} is not valid until ${key.validFrom}`;
  }
  if (key.validUntil !== null && at > Date.parse(key.validUntil)) {
    return `it was signed at ${attestedAt}, after key ${key.keyid} expired (${key.validUntil})`;
  }
  return null;
}

/** A trust store entry for a key, for `provael keygen` to print and operators to paste. */
export function trustStoreEntry(
  publicKey: Uint8Array,
  pem: string,
  validFrom: string,
  validUntil: string | null,
  label?: string,
): TrustStoreFile["keys"][number] {
  return {
    keyid: keyIdOf(publicKey),
    ...(label === undefined ? {} : { label }),
    publicKeyPem: pem,
    validFrom,
    validUntil,
  };
}
