import { describe, expect, it } from "vitest";
import { ProvaelError } from "../core/errors.js";
import { IN_TOTO_PAYLOAD_TYPE, pae, parseEnvelope, signEnvelope, verifyEnvelope } from "./dsse.js";
import { decodeBase64Strict } from "./files.js";
import { keyPairFromSeed, publicKeyPem } from "./keys.js";
import { trustPublicKey } from "./trust-store.js";

const pair = keyPairFromSeed(new Uint8Array(32).fill(9));
const trusted = [trustPublicKey(publicKeyPem(pair.publicKey), "test key")];
const opts = { payloadType: IN_TOTO_PAYLOAD_TYPE, now: 0, what: "env" };

const codeOf = (f: () => unknown) => {
  try {
    f();
    return "ok";
  } catch (e) {
    if (!(e instanceof ProvaelError)) throw e;
    return e.code;
  }
};

describe("DSSE", () => {
  it("encodes PAE as the DSSE v1 specification's example", () => {
    const out = Buffer.from(
      pae("http://example.com/HelloWorld", Buffer.from("hello world")),
    ).toString();
    expect(out).toBe("DSSEv1 29 http://example.com/HelloWorld 11 hello world");
    // Lengths count bytes, not characters.
    expect(Buffer.from(pae("t", Buffer.from("é"))).toString()).toBe("DSSEv1 1 t 2 é");
  });

  it("signs and verifies, and names the signature by keyid", () => {
    const env = signEnvelope(IN_TOTO_PAYLOAD_TYPE, Buffer.from("{}"), pair);
    expect(env.signatures[0]?.keyid).toBe(trusted[0]?.keyid);
    expect(verifyEnvelope(env, trusted, opts).body.toString()).toBe("{}");
  });

  it("tells unsigned, unknown key, bad signature and wrong payload type apart", () => {
    const env = signEnvelope(IN_TOTO_PAYLOAD_TYPE, Buffer.from("{}"), pair);
    expect(codeOf(() => verifyEnvelope({ ...env, signatures: [] }, trusted, opts))).toBe(
      "evidence/unsigned",
    );
    const other = keyPairFromSeed(new Uint8Array(32).fill(10));
    const otherTrust = [trustPublicKey(publicKeyPem(other.publicKey), "other")];
    expect(codeOf(() => verifyEnvelope(env, otherTrust, opts))).toBe("evidence/untrusted-key");
    const forged = { ...env, payload: Buffer.from("[]").toString("base64") };
    expect(codeOf(() => verifyEnvelope(forged, trusted, opts))).toBe("evidence/bad-signature");
    expect(codeOf(() => verifyEnvelope({ ...env, payloadType: "text/plain" }, trusted, opts))).toBe(
      "evidence/malformed",
    );
    // A keyless signature is checked against the single trusted key.
    const keyless = { ...env, signatures: [{ sig: env.signatures[0]?.sig as string }] };
    expect(codeOf(() => verifyEnvelope(keyless, trusted, opts))).toBe("ok");
  });

  it("refuses unknown fields and bare statements", () => {
    const env = signEnvelope(IN_TOTO_PAYLOAD_TYPE, Buffer.from("{}"), pair);
    expect(codeOf(() => parseEnvelope({ ...env, extra: 1 }, "env"))).toBe("evidence/malformed");
    expect(codeOf(() => parseEnvelope([], "env"))).toBe("evidence/malformed");
    expect(codeOf(() => parseEnvelope({ _type: "https://in-toto.io/Statement/v1" }, "env"))).toBe(
      "evidence/unsigned",
    );
  });

  it("decodes base64 strictly", () => {
    expect(decodeBase64Strict("aGk=", "x").toString()).toBe("hi");
    for (const bad of ["aGk", "aGl=", "a Gk=", "aGk=\n", "aG!=", "aGk==", "-_8="]) {
      expect(
        codeOf(() => decodeBase64Strict(bad, "x")),
        bad,
      ).toBe("evidence/malformed");
    }
  });
});
