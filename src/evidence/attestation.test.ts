import { readFileSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runStub } from "../../test/support/stub-run.js";
import { tempDir } from "../../test/support/tmp.js";
import { resolveAttacks } from "../attacks/index.js";
import { fixedClock } from "../core/clock.js";
import { sha256 } from "../core/digest.js";
import { ProvaelError } from "../core/errors.js";
import { Rng } from "../core/rng.js";
import {
  attestRun,
  buildRedteamStatement,
  DISCLAIMER,
  inspectAttestation,
  REDTEAM_PREDICATE_TYPE,
  readRunFiles,
  STATEMENT_TYPE,
  signStatement,
  verifyAttestationBytes,
  verifyAttestationFile,
  writeEnvelope,
} from "./attestation.js";
import { IN_TOTO_PAYLOAD_TYPE, signEnvelope } from "./dsse.js";
import { keyPairFromSeed, publicKeyPem } from "./keys.js";
import { parseTrustStore, type TrustedKey, trustPublicKey } from "./trust-store.js";

const stubRun = (out: string, seeds: number, attacks = ["none", "control", "instruction"]) =>
  runStub(out, { arms: resolveAttacks(attacks), seeds });

const T0 = Date.parse("2026-06-01T12:00:00Z");
const key = keyPairFromSeed(new Uint8Array(32).fill(1));
const pem = publicKeyPem(key.publicKey);
const trusted: TrustedKey[] = [trustPublicKey(pem, "test")];

/** The error code a verification ends with, or "ok"; anything but a ProvaelError fails the test. */
function outcome(f: () => unknown): string {
  try {
    f();
    return "ok";
  } catch (e) {
    if (!(e instanceof ProvaelError)) throw new Error(`crashed with ${String(e)}`);
    return e.code;
  }
}

let run: string;
let other: string;
let envelopeBytes: Buffer;
let reportBytes: Buffer;

beforeAll(async () => {
  const root = tempDir();
  run = join(root, "run");
  other = join(root, "other");
  await stubRun(run, 3);
  await stubRun(other, 4);
  const env = attestRun(run, key, fixedClock(T0));
  writeEnvelope(join(run, "attestation.dsse.json"), env);
  envelopeBytes = readFileSync(join(run, "attestation.dsse.json"));
  reportBytes = readFileSync(join(run, "report.json"));
});

const verify = (
  bytes: Uint8Array,
  opts: { report?: Uint8Array; trust?: TrustedKey[]; now?: number } = {},
) =>
  verifyAttestationBytes(bytes, opts.trust ?? trusted, {
    now: opts.now ?? T0 + 1000,
    ...(opts.report === undefined ? {} : { reportBytes: opts.report }),
  });

describe("attestation", () => {
  it("is an in-toto Statement v1 about report.json in a DSSE envelope", () => {
    const env = JSON.parse(envelopeBytes.toString()) as {
      payloadType: string;
      payload: string;
      signatures: { keyid: string }[];
    };
    expect(env.payloadType).toBe(IN_TOTO_PAYLOAD_TYPE);
    const st = JSON.parse(Buffer.from(env.payload, "base64").toString());
    expect(st._type).toBe(STATEMENT_TYPE);
    expect(st.predicateType).toBe(REDTEAM_PREDICATE_TYPE);
    expect(st.subject).toEqual([
      { name: "report.json", digest: { sha256: sha256(reportBytes).slice(7) } },
    ]);
    expect(st.predicate.disclaimer).toBe(DISCLAIMER);
    expect(st.predicate.attested_at).toBe("2026-06-01T12:00:00.000Z");
    expect(st.predicate.run.policy).toBe("stub");
    expect(st.predicate.verdict).toBeNull();
    expect(st.predicate.manifest.digest).toBe(
      sha256(readFileSync(join(run, "execution-manifest.json"))),
    );
    expect(Object.keys(st.predicate.calibration)).toEqual(["fetch_cup", "wipe_plate"]);
    expect(env.signatures[0]?.keyid).toBe(trusted[0]?.keyid);
  });

  it("verifies, with and without the report", () => {
    const v = verify(envelopeBytes, { report: reportBytes });
    expect(v.subjectDigest).toBe(sha256(reportBytes));
    expect(v.reportChecked).toBe(true);
    expect(
      verifyAttestationFile(join(run, "attestation.dsse.json"), trusted, {
        now: T0,
        reportDir: run,
      }).keyid,
    ).toBe(v.keyid);
    expect(verify(envelopeBytes).reportChecked).toBe(false);
  });

  it("tells a report of another run (subject) from a changed report (digest)", () => {
    expect(
      outcome(() => verify(envelopeBytes, { report: readFileSync(join(other, "report.json")) })),
    ).toBe("evidence/subject-mismatch");
    const changed = Buffer.from(reportBytes);
    const at = changed.indexOf('"successes":') + 12;
    changed[at] = changed[at] === 0x31 ? 0x32 : 0x31;
    expect(outcome(() => verify(envelopeBytes, { report: changed }))).toBe(
      "evidence/digest-mismatch",
    );
  });

  it("refuses unsigned envelopes and bare statements", () => {
    const env = JSON.parse(envelopeBytes.toString());
    expect(outcome(() => verify(Buffer.from(JSON.stringify({ ...env, signatures: [] }))))).toBe(
      "evidence/unsigned",
    );
    const statement = Buffer.from(env.payload, "base64");
    expect(outcome(() => verify(statement))).toBe("evidence/unsigned");
  });

  it("refuses malformed input with clear errors", () => {
    const env = JSON.parse(envelopeBytes.toString());
    const cases: Array<[string, string | Buffer]> = [
      ["empty", ""],
      ["not JSON", "{"],
      ["array", "[]"],
      ["null", "null"],
      ["unknown field", JSON.stringify({ ...env, note: "hi" })],
      ["payload type", JSON.stringify({ ...env, payloadType: "application/json" })],
      ["payload not a string", JSON.stringify({ ...env, payload: 5 })],
      ["not UTF-8", Buffer.from([0x7b, 0xff, 0xfe, 0x7d])],
    ];
    for (const [label, bytes] of cases) {
      expect(
        outcome(() => verify(Buffer.from(bytes))),
        label,
      ).toBe("evidence/malformed");
    }
    // A correctly signed payload that is not a Provael statement is malformed, not trusted.
    const junk = signEnvelope(IN_TOTO_PAYLOAD_TYPE, Buffer.from('{"_type":"x"}'), key);
    expect(outcome(() => verify(Buffer.from(JSON.stringify(junk))))).toBe("evidence/malformed");
    const st = JSON.parse(Buffer.from(env.payload, "base64").toString());
    const extra = signStatement({ ...st, predicate: { ...st.predicate, surprise: true } }, key);
    expect(outcome(() => verify(Buffer.from(JSON.stringify(extra))))).toBe("evidence/malformed");
    const other = signStatement(
      { ...st, subject: [{ name: "model.onnx", digest: { sha256: "00" } }] },
      key,
    );
    expect(outcome(() => verify(Buffer.from(JSON.stringify(other))))).toBe(
      "evidence/subject-mismatch",
    );
  });

  it("caps the file size before reading", () => {
    const path = join(tempDir(), "huge.json");
    writeFileSync(path, "");
    truncateSync(path, 10 * 1024 * 1024 + 1);
    const err = (() => {
      try {
        verifyAttestationFile(path, trusted, { now: T0 });
      } catch (e) {
        return e as ProvaelError;
      }
      return null;
    })();
    expect(err?.code).toBe("evidence/malformed");
    expect(err?.message).toMatch(/over the 10485760-byte limit/);
  });

  it("applies the trust store: unknown, revoked, expired and not-yet-valid keys", () => {
    const entry = (over: Record<string, unknown> = {}) => ({
      keyid: trusted[0]?.keyid,
      publicKeyPem: pem,
      validFrom: "2026-01-01T00:00:00Z",
      validUntil: "2027-01-01T00:00:00Z",
      ...over,
    });
    const store = (over: Record<string, unknown> = {}) => parseTrustStore({ keys: [entry(over)] });
    expect(outcome(() => verify(envelopeBytes, { trust: store() }))).toBe("ok");
    const stranger = keyPairFromSeed(new Uint8Array(32).fill(2));
    expect(
      outcome(() =>
        verify(envelopeBytes, { trust: [trustPublicKey(publicKeyPem(stranger.publicKey), "x")] }),
      ),
    ).toBe("evidence/untrusted-key");
    expect(
      outcome(() =>
        verify(envelopeBytes, {
          trust: store({ revoked: { at: "2026-03-01T00:00:00Z", reason: "key leaked" } }),
        }),
      ),
    ).toBe("evidence/untrusted-key");
    // Revocation scheduled after now does not apply yet.
    expect(
      outcome(() =>
        verify(envelopeBytes, {
          trust: store({ revoked: { at: "2026-09-01T00:00:00Z", reason: "rotation" } }),
        }),
      ),
    ).toBe("ok");
    expect(
      outcome(() =>
        verify(envelopeBytes, { trust: store({ validUntil: "2026-05-01T00:00:00Z" }) }),
      ),
    ).toBe("evidence/untrusted-key");
    expect(
      outcome(() => verify(envelopeBytes, { trust: store({ validFrom: "2026-07-01T00:00:00Z" }) })),
    ).toBe("evidence/untrusted-key");
    expect(outcome(() => verify(envelopeBytes, { trust: store({ validUntil: null }) }))).toBe("ok");
  });

  it("validates trust stores", () => {
    const good = {
      keyid: trusted[0]?.keyid,
      publicKeyPem: pem,
      validFrom: "2026-01-01T00:00:00Z",
      validUntil: null,
    };
    const bad: unknown[] = [
      {},
      { keys: [{ ...good, keyid: "ab" }] },
      { keys: [{ ...good, keyid: "0".repeat(64) }] },
      { keys: [good, good] },
      { keys: [{ ...good, colour: "red" }] },
      { keys: [{ ...good, validFrom: "yesterday" }] },
      { keys: [{ ...good, validUntil: "2025-01-01T00:00:00Z" }] },
      { keys: [{ ...good, publicKeyPem: "nope" }] },
      { keys: [good], extra: 1 },
    ];
    for (const b of bad)
      expect(
        outcome(() => parseTrustStore(b)),
        JSON.stringify(b),
      ).toBe("evidence/malformed");
    expect(parseTrustStore({ schema: "provael.trust-store/1", keys: [good] })).toHaveLength(1);
  });

  it("detects every single-byte change to the envelope with the right code, never crashing", () => {
    const text = envelopeBytes.toString("latin1");
    const env = JSON.parse(text) as {
      payloadType: string;
      payload: string;
      signatures: { keyid: string; sig: string }[];
    };
    const span = (value: string) => {
      const start = text.indexOf(`"${value}"`) + 1;
      return [start, start + value.length] as const;
    };
    const regions: Array<[readonly [number, number], string[]]> = [
      [span(env.payload), ["evidence/malformed", "evidence/bad-signature"]],
      [span(env.signatures[0]?.sig as string), ["evidence/malformed", "evidence/bad-signature"]],
      [span(env.signatures[0]?.keyid as string), ["evidence/malformed", "evidence/untrusted-key"]],
      [span(env.payloadType), ["evidence/malformed"]],
    ];
    const allowed = (offset: number) =>
      regions.find(([[a, b]]) => offset >= a && offset < b)?.[1] ?? ["evidence/malformed"];
    // Every byte outside the payload, and a seeded sample of payload bytes.
    const [pa, pb] = span(env.payload);
    const rng = Rng.fromLabel("tamper:envelope");
    const offsets = new Set<number>();
    for (let i = 0; i < envelopeBytes.length; i++) if (i < pa || i >= pb) offsets.add(i);
    while (offsets.size < envelopeBytes.length - (pb - pa) + 400)
      offsets.add(pa + rng.int(pb - pa));
    const seen = new Set<string>();
    for (const offset of offsets) {
      for (const mask of [0x01, 0x20, 0x80, 1 + rng.int(255)]) {
        const bytes = Buffer.from(envelopeBytes);
        bytes[offset] = (bytes[offset] as number) ^ mask;
        const code = outcome(() => verify(bytes, { report: reportBytes }));
        seen.add(code);
        expect(allowed(offset), `offset ${offset} mask ${mask}: ${code}`).toContain(code);
      }
    }
    expect([...seen].sort()).toEqual([
      "evidence/bad-signature",
      "evidence/malformed",
      "evidence/untrusted-key",
    ]);
  });

  it("detects every change to the signed payload as a bad signature", () => {
    const env = JSON.parse(envelopeBytes.toString()) as { payload: string };
    const payload = Buffer.from(env.payload, "base64");
    const rng = Rng.fromLabel("tamper:payload");
    for (let k = 0; k < 300; k++) {
      const offset = rng.int(payload.length);
      const changed = Buffer.from(payload);
      changed[offset] = (changed[offset] as number) ^ (1 + rng.int(255));
      const bytes = Buffer.from(JSON.stringify({ ...env, payload: changed.toString("base64") }));
      expect(
        outcome(() => verify(bytes, { report: reportBytes })),
        `payload offset ${offset}`,
      ).toBe("evidence/bad-signature");
    }
  });

  it("detects every single-byte change to report.json", () => {
    const text = reportBytes.toString("latin1");
    const runStart = text.indexOf('"run":{');
    // The run object nests (attack_params, plugins): its end is the brace that closes it.
    let runEnd = runStart + '"run":'.length;
    for (let depth = 0; ; runEnd++) {
      if (text[runEnd] === "{") depth++;
      else if (text[runEnd] === "}" && --depth === 0) break;
    }
    const rng = Rng.fromLabel("tamper:report");
    const offsets = new Set<number>([0, reportBytes.length - 1]);
    for (let i = runStart; i <= runEnd; i++) offsets.add(i);
    while (offsets.size < runEnd - runStart + 300) offsets.add(rng.int(reportBytes.length));
    for (const offset of offsets) {
      const bytes = Buffer.from(reportBytes);
      bytes[offset] = (bytes[offset] as number) ^ (1 + rng.int(255));
      const code = outcome(() => verify(envelopeBytes, { report: bytes }));
      const inRun = offset >= runStart && offset <= runEnd;
      expect(
        inRun
          ? ["evidence/subject-mismatch", "evidence/digest-mismatch"]
          : ["evidence/digest-mismatch"],
        `offset ${offset}`,
      ).toContain(code);
    }
  });

  it("lets the compliance map find an attestation of this exact report", () => {
    expect(inspectAttestation(join(run, "attestation.dsse.json"), reportBytes).present).toBe(true);
    expect(
      inspectAttestation(
        join(run, "attestation.dsse.json"),
        readFileSync(join(other, "report.json")),
      ).present,
    ).toBe(false);
    expect(inspectAttestation(join(run, "missing.json"), reportBytes).present).toBe(false);
  });

  it("records the manifest's verdict when there is one", () => {
    const files = readRunFiles(run);
    const verdict = { verdict: "pass", criteria: [] };
    const st = buildRedteamStatement(
      { ...files, manifest: { value: { verdict }, bytes: Buffer.from("{}") } },
      "2026-06-01T12:00:00.000Z",
    );
    expect(st.predicate.verdict).toEqual(verdict);
    expect(st.predicate.manifest?.plan_digest).toBeNull();
  });
});
