/**
 * DSSE envelopes (Dead Simple Signing Envelope, secure-systems-lab/dsse v1): the signature covers
 * the pre-authentication encoding of the payload type and body, never the JSON around them.
 */
import { z } from "zod";
import { ProvaelError } from "../core/errors.js";
import { describeIssues } from "../core/zod-issues.js";
import { decodeBase64Strict } from "./files.js";
import { type KeyPair, keyIdOf, signBytes, verifyBytes } from "./keys.js";
import type { TrustedKey } from "./trust-store.js";

/** The payload type of an in-toto statement inside a DSSE envelope. */
export const IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json";

export const envelopeSchema = z
  .object({
    payloadType: z.string(),
    payload: z.string(),
    signatures: z.array(z.object({ keyid: z.string().optional(), sig: z.string() }).strict()),
  })
  .strict();

export type Envelope = z.infer<typeof envelopeSchema>;

/** DSSE v1 pre-authentication encoding: "DSSEv1" SP len(type) SP type SP len(body) SP body. */
export function pae(payloadType: string, body: Uint8Array): Uint8Array {
  const type = Buffer.from(payloadType, "utf8");
  const head = Buffer.from(`DSSEv1 ${type.length} ${payloadType} ${body.length} `, "utf8");
  return new Uint8Array(Buffer.concat([head, body]));
}

/** Signs `body` into a one-signature envelope whose keyid is the SHA-256 of the public key. */
export function signEnvelope(payloadType: string, body: Uint8Array, key: KeyPair): Envelope {
  return {
    payloadType,
    payload: Buffer.from(body).toString("base64"),
    signatures: [
      {
        keyid: keyIdOf(key.publicKey),
        sig: Buffer.from(signBytes(pae(payloadType, body), key.secretKey)).toString("base64"),
      },
    ],
  };
}

/** Turns a parsed JSON value into an envelope, with a clear error for each way it can be off. */
export function parseEnvelope(value: unknown, what: string): Envelope {
  if (value !== null && typeof value === "object" && "_type" in value && !("payload" in value)) {
    throw new ProvaelError("evidence/unsigned", `${what} is a bare in-toto statement, not signed`, {
      hint: "sign it with `provael attest --key private.pem`",
    });
  }
  const parsed = envelopeSchema.safeParse(value);
  if (!parsed.success) {
    throw new ProvaelError(
      "evidence/malformed",
      `${what} is not a DSSE envelope at ${describeIssues(parsed.error)}`,
      {
        details: { issues: parsed.error.issues.map((i) => ({ path: i.path, message: i.message })) },
      },
    );
  }
  return parsed.data;
}

export interface VerifiedEnvelope {
  body: Buffer;
  key: TrustedKey;
}

/**
 * Checks an envelope's payload type, decodes its payload and verifies its signatures against
 * the trusted keys. Every signature by a known key must verify and none may be revoked; at
 * least one must come from a known key. Returns the verified body, not yet parsed.
 */
export function verifyEnvelope(
  envelope: Envelope,
  trusted: readonly TrustedKey[],
  options: { payloadType: string; now: number; what: string },
): VerifiedEnvelope {
  const { what } = options;
  if (envelope.payloadType !== options.payloadType) {
    throw new ProvaelError(
      "evidence/malformed",
      `${what} carries payload type '${envelope.payloadType}', expected '${options.payloadType}'`,
    );
  }
  const body = decodeBase64Strict(envelope.payload, `${what} payload`);
  if (envelope.signatures.length === 0) {
    throw new ProvaelError("evidence/unsigned", `${what} has no signature`, {
      hint: "sign it with `provael attest --key private.pem`",
    });
  }
  const message = pae(envelope.payloadType, body);
  let accepted: TrustedKey | null = null;
  const unknown: string[] = [];
  for (const s of envelope.signatures) {
    // Without a keyid the signature can only be checked when exactly one key is trusted.
    const key =
      s.keyid === undefined || s.keyid === ""
        ? trusted.length === 1
          ? trusted[0]
          : undefined
        : trusted.find((k) => k.keyid === s.keyid);
    if (key === undefined) {
      unknown.push(s.keyid ?? "(no keyid)");
      continue;
    }
    if (key.revoked !== null && Date.parse(key.revoked.at) <= options.now) {
      throw new ProvaelError(
        "evidence/untrusted-key",
        `${what} is signed by key ${key.keyid}, revoked at ${key.revoked.at} (${key.revoked.reason})`,
        { details: { keyid: key.keyid } },
      );
    }
    const sig = decodeBase64Strict(s.sig, `${what} signature`);
    if (!verifyBytes(sig, message, key.publicKey)) {
      throw new ProvaelError(
        "evidence/bad-signature",
        `${what}: the signature by key ${key.keyid} does not verify`,
        {
          details: { keyid: key.keyid },
          hint: "the envelope was changed after signing, or signed with another key",
        },
      );
    }
    accepted = key;
  }
  if (accepted === null) {
    throw new ProvaelError(
      "evidence/untrusted-key",
      `${what} is signed only by unknown key(s): ${unknown.join(", ")}`,
      {
        details: { keyids: unknown, trusted: trusted.map((k) => k.keyid) },
        hint: "pass the signer's public key with --pubkey, or add it to the trust store",
      },
    );
  }
  return { body, key: accepted };
}
