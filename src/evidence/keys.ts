/**
 * Ed25519 keys. PEM files are the standard containers (PKCS#8 private, SPKI public), read and
 * written with node:crypto; signing and verifying run in @noble/ed25519 on the raw 32-byte keys.
 */
import { createPrivateKey, createPublicKey, type KeyObject } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as ed from "@noble/ed25519";
import { sha512 } from "@noble/hashes/sha2.js";
import { sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";

// The synchronous noble API needs a SHA-512; @noble/hashes supplies it without WebCrypto.
ed.hashes.sha512 = sha512;

export interface KeyPair {
  /** 32-byte Ed25519 seed (RFC 8032 private key). */
  secretKey: Uint8Array;
  /** 32-byte Ed25519 public key. */
  publicKey: Uint8Array;
}

/** A key id: SHA-256 of the raw 32-byte public key, as 64 lowercase hex digits. */
export function keyIdOf(publicKey: Uint8Array): string {
  return sha256(publicKey).slice("sha256:".length);
}

/** A fresh key pair from the operating system's CSPRNG (never the seeded experiment Rng). */
export function generateKeyPair(): KeyPair {
  return keyPairFromSeed(ed.utils.randomSecretKey());
}

/** The key pair of a 32-byte seed (tests use fixed seeds). */
export function keyPairFromSeed(seed: Uint8Array): KeyPair {
  if (seed.length !== 32) {
    throw new ProvaelError("evidence/key-invalid", "an Ed25519 seed is 32 bytes");
  }
  return { secretKey: Uint8Array.from(seed), publicKey: ed.getPublicKey(seed) };
}

const b64url = (b: Uint8Array) => Buffer.from(b).toString("base64url");

function rawFromJwk(value: unknown, what: string): Uint8Array {
  const bytes = typeof value === "string" ? Buffer.from(value, "base64url") : null;
  if (bytes === null || bytes.length !== 32) {
    throw new ProvaelError("evidence/key-invalid", `${what} does not hold a 32-byte Ed25519 key`);
  }
  return new Uint8Array(bytes);
}

function expectEd25519(key: KeyObject, what: string): void {
  if (key.asymmetricKeyType !== "ed25519") {
    throw new ProvaelError(
      "evidence/key-invalid",
      `${what} is a ${key.asymmetricKeyType ?? "unknown"} key, not Ed25519`,
      { hint: "create one with `provael keygen --out DIR`" },
    );
  }
}

/** PKCS#8 PEM of a key pair's private key. */
export function privateKeyPem(pair: KeyPair): string {
  return createPrivateKey({
    key: { kty: "OKP", crv: "Ed25519", d: b64url(pair.secretKey), x: b64url(pair.publicKey) },
    format: "jwk",
  })
    .export({ type: "pkcs8", format: "pem" })
    .toString();
}

/** SPKI PEM of a raw public key. */
export function publicKeyPem(publicKey: Uint8Array): string {
  return createPublicKey({
    key: { kty: "OKP", crv: "Ed25519", x: b64url(publicKey) },
    format: "jwk",
  })
    .export({ type: "spki", format: "pem" })
    .toString();
}

/** Reads a PKCS#8 PEM Ed25519 private key into raw bytes. */
export function parsePrivateKeyPem(pem: string, what = "the private key"): KeyPair {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: "pem" });
  } catch (e) {
    throw new ProvaelError("evidence/key-invalid", `${what} is not a PEM private key`, {
      cause: e,
      hint: "pass the private.pem written by `provael keygen`",
    });
  }
  expectEd25519(key, what);
  const jwk = key.export({ format: "jwk" });
  const pair = keyPairFromSeed(rawFromJwk(jwk.d, what));
  if (Buffer.compare(Buffer.from(pair.publicKey), Buffer.from(rawFromJwk(jwk.x, what))) !== 0) {
    throw new ProvaelError("evidence/key-invalid", `${what} holds an inconsistent key pair`);
  }
  return pair;
}

/** Reads an SPKI PEM Ed25519 public key into its raw 32 bytes. */
export function parsePublicKeyPem(pem: string, what = "the public key"): Uint8Array {
  // node:crypto would derive the public key from a private one; refuse it, a secret is being passed around.
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem)) {
    throw new ProvaelError("evidence/key-invalid", `${what} is a private key`, {
      hint: "share and verify with public.pem; keep private.pem secret",
    });
  }
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: "pem" });
  } catch (e) {
    throw new ProvaelError("evidence/key-invalid", `${what} is not a PEM public key`, {
      cause: e,
      hint: "pass the public.pem written by `provael keygen`",
    });
  }
  expectEd25519(key, what);
  return rawFromJwk(key.export({ format: "jwk" }).x, what);
}

/** Ed25519 signature (RFC 8032) of `message`. */
export function signBytes(message: Uint8Array, secretKey: Uint8Array): Uint8Array {
  return ed.sign(message, secretKey);
}

/** Strict RFC 8032 verification; a wrong-length signature or key is simply invalid. */
export function verifyBytes(
  signature: Uint8Array,
  message: Uint8Array,
  publicKey: Uint8Array,
): boolean {
  if (signature.length !== 64 || publicKey.length !== 32) return false;
  try {
    return ed.verify(signature, message, publicKey, { zip215: false });
  } catch {
    // noble throws on points that do not decode: that is a signature that does not verify.
    return false;
  }
}

export interface WrittenKeys {
  privatePath: string;
  publicPath: string;
  keyid: string;
}

/**
 * Writes `private.pem` (mode 0600) and `public.pem` into `dir`, refusing to overwrite keys
 * unless `force` is set, since a lost private key cannot be recovered.
 */
export function writeKeyPair(dir: string, pair: KeyPair, force = false): WrittenKeys {
  const privatePath = join(dir, "private.pem");
  const publicPath = join(dir, "public.pem");
  for (const p of [privatePath, publicPath]) {
    if (!force && existsSync(p)) {
      throw new ProvaelError("io/write", `${p} already exists`, {
        details: { path: p },
        hint: "pick another --out directory, or pass --force to replace the keys",
      });
    }
  }
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(privatePath, privateKeyPem(pair), { mode: 0o600 });
    // writeFileSync keeps the mode of an existing file; set it again when replacing one.
    chmodSync(privatePath, 0o600);
    writeFileSync(publicPath, publicKeyPem(pair.publicKey), { mode: 0o644 });
  } catch (e) {
    throw new ProvaelError("io/write", `cannot write keys to ${dir}: ${(e as Error).message}`, {
      cause: e,
    });
  }
  return { privatePath, publicPath, keyid: keyIdOf(pair.publicKey) };
}
