import { generateKeyPairSync, sign as nodeSign, verify as nodeVerify } from "node:crypto";
import { statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { tempDir } from "../../test/support/tmp.js";
import { sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import {
  generateKeyPair,
  keyIdOf,
  keyPairFromSeed,
  parsePrivateKeyPem,
  parsePublicKeyPem,
  privateKeyPem,
  publicKeyPem,
  signBytes,
  verifyBytes,
  writeKeyPair,
} from "./keys.js";

const seed = (b: number) => new Uint8Array(32).fill(b);
const code = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e instanceof ProvaelError ? e.code : `not a ProvaelError: ${String(e)}`;
  }
  return "no error";
};

describe("Ed25519 keys", () => {
  it("round-trips PEM files and interoperates with node:crypto", () => {
    const pair = keyPairFromSeed(seed(7));
    const priv = privateKeyPem(pair);
    const pub = publicKeyPem(pair.publicKey);
    expect(priv).toContain("BEGIN PRIVATE KEY");
    expect(pub).toContain("BEGIN PUBLIC KEY");
    expect(parsePrivateKeyPem(priv)).toEqual(pair);
    expect(parsePublicKeyPem(pub)).toEqual(pair.publicKey);
    const msg = Buffer.from("provael");
    // A noble signature verifies in node:crypto and the other way round: plain RFC 8032.
    expect(nodeVerify(null, msg, pub, Buffer.from(signBytes(msg, pair.secretKey)))).toBe(true);
    expect(verifyBytes(nodeSign(null, msg, priv), msg, pair.publicKey)).toBe(true);
    expect(
      verifyBytes(signBytes(msg, pair.secretKey), Buffer.from("provaeL"), pair.publicKey),
    ).toBe(false);
  });

  it("names a key by the SHA-256 of its raw public key", () => {
    const pair = keyPairFromSeed(seed(1));
    expect(keyIdOf(pair.publicKey)).toBe(sha256(pair.publicKey).slice(7));
    expect(keyIdOf(pair.publicKey)).toMatch(/^[0-9a-f]{64}$/);
    expect(generateKeyPair().secretKey).not.toEqual(generateKeyPair().secretKey);
  });

  it("writes private.pem with mode 0600 and refuses to overwrite without force", () => {
    const dir = tempDir();
    const w = writeKeyPair(dir, keyPairFromSeed(seed(2)));
    expect(statSync(w.privatePath).mode & 0o777).toBe(0o600);
    expect(code(() => writeKeyPair(dir, keyPairFromSeed(seed(3))))).toBe("io/write");
    writeKeyPair(dir, keyPairFromSeed(seed(3)), true);
    expect(statSync(w.privatePath).mode & 0o777).toBe(0o600);
  });

  it("refuses keys of other types, swapped keys and garbage with key-invalid", () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 });
    const ec = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const pair = keyPairFromSeed(seed(4));
    expect(
      code(() =>
        parsePrivateKeyPem(rsa.privateKey.export({ type: "pkcs8", format: "pem" }).toString()),
      ),
    ).toBe("evidence/key-invalid");
    expect(
      code(() =>
        parsePublicKeyPem(ec.publicKey.export({ type: "spki", format: "pem" }).toString()),
      ),
    ).toBe("evidence/key-invalid");
    expect(code(() => parsePublicKeyPem(privateKeyPem(pair)))).toBe("evidence/key-invalid");
    expect(code(() => parsePrivateKeyPem(publicKeyPem(pair.publicKey)))).toBe(
      "evidence/key-invalid",
    );
    expect(code(() => parsePrivateKeyPem("not a pem"))).toBe("evidence/key-invalid");
    expect(code(() => keyPairFromSeed(new Uint8Array(31)))).toBe("evidence/key-invalid");
    expect(
      code(() => parsePublicKeyPem("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")),
    ).toBe("evidence/key-invalid");
  });

  it("treats malformed signatures and keys as not verifying, never throwing", () => {
    const pair = keyPairFromSeed(seed(5));
    const msg = Buffer.from("m");
    const sig = signBytes(msg, pair.secretKey);
    expect(verifyBytes(sig.subarray(0, 63), msg, pair.publicKey)).toBe(false);
    expect(verifyBytes(sig, msg, new Uint8Array(32).fill(0xff))).toBe(false);
    expect(verifyBytes(new Uint8Array(64).fill(0xff), msg, pair.publicKey)).toBe(false);
  });
});
