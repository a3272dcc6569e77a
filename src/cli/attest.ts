/** `provael keygen`, `provael attest` and `provael verify`: thin wrappers over src/evidence. */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { Command } from "commander";
import { systemClock } from "../core/clock.js";
import { type ErrorCode, isProvaelError, ProvaelError } from "../core/errors.js";
import { attestRun, verifyAttestationFile, writeEnvelope } from "../evidence/attestation.js";
import { readEvidenceFile } from "../evidence/files.js";
import {
  generateKeyPair,
  type KeyPair,
  parsePrivateKeyPem,
  writeKeyPair,
} from "../evidence/keys.js";
import { readTrustStore, type TrustedKey, trustPublicKey } from "../evidence/trust-store.js";
import { checkOutputFile } from "../rundir/files.js";
import { reportError } from "./exit.js";

/**
 * Exit codes of `provael verify` and `provael leaderboard verify`, one per way verification
 * fails (docs/evidence.md). Usage errors (a missing file or flag) keep the usual exit 2.
 */
export const VERIFY_EXIT = {
  ok: 0,
  malformed: 10,
  unsigned: 11,
  badSignature: 12,
  untrustedKey: 13,
  subjectMismatch: 14,
  digestMismatch: 15,
} as const;

const VERIFY_CODES: Partial<Record<ErrorCode, number>> = {
  "evidence/malformed": VERIFY_EXIT.malformed,
  "evidence/key-invalid": VERIFY_EXIT.malformed,
  "evidence/unsigned": VERIFY_EXIT.unsigned,
  "evidence/bad-signature": VERIFY_EXIT.badSignature,
  "evidence/untrusted-key": VERIFY_EXIT.untrustedKey,
  "evidence/subject-mismatch": VERIFY_EXIT.subjectMismatch,
  "evidence/digest-mismatch": VERIFY_EXIT.digestMismatch,
};

/** Runs a verifying action, turning evidence errors into their exit codes from VERIFY_EXIT. */
export async function withVerifyExit(
  json: boolean,
  action: () => void | Promise<void>,
): Promise<void> {
  try {
    await action();
  } catch (e) {
    const code = isProvaelError(e) ? VERIFY_CODES[e.code] : undefined;
    if (code === undefined) throw e;
    reportError(e, json);
    process.exitCode = code;
  }
}

/** The keys a verifier trusts: exactly one of --pubkey or --trust-store. */
export function trustedKeys(flags: { pubkey?: string; trustStore?: string }): TrustedKey[] {
  if ((flags.pubkey === undefined) === (flags.trustStore === undefined)) {
    throw new ProvaelError("config/invalid", "pass exactly one of --pubkey and --trust-store", {
      hint: "--pubkey public.pem trusts one key; --trust-store FILE trusts the keys it lists",
    });
  }
  if (flags.pubkey !== undefined) {
    const pem = readEvidenceFile(flags.pubkey, "public key", 64 * 1024).toString("utf8");
    return [trustPublicKey(pem, flags.pubkey)];
  }
  return readTrustStore(flags.trustStore as string);
}

/** Reads a private key file for signing; a bad one is a usage error. */
export function readPrivateKey(path: string): KeyPair {
  let pem: string;
  try {
    pem = readFileSync(path, "utf8");
  } catch (e) {
    throw new ProvaelError("io/read", `cannot read the key ${path}: ${(e as Error).message}`, {
      cause: e,
      hint: "create one with `provael keygen --out DIR`",
    });
  }
  try {
    return parsePrivateKeyPem(pem, path);
  } catch (e) {
    const err = e as ProvaelError;
    throw new ProvaelError("config/invalid", err.message, {
      cause: e,
      ...(err.hint ? { hint: err.hint } : {}),
    });
  }
}

/** The git work tree holding `dir` (the nearest ancestor with a `.git`), or null. */
function enclosingWorkTree(dir: string): string | null {
  for (let d = resolve(dir); ; d = dirname(d)) {
    if (existsSync(join(d, ".git"))) return d;
    if (dirname(d) === d) return null;
  }
}

/** Where `keygen` writes without --out: the user's configuration folder, never a work tree. */
function defaultKeyDir(): string {
  return join(process.env.XDG_CONFIG_HOME ?? join(homedir(), ".config"), "provael", "keys");
}

export function registerKeygen(program: Command): void {
  program
    .command("keygen")
    .option(
      "--out <dir>",
      "directory for the two PEM files (default: $XDG_CONFIG_HOME/provael/keys, else ~/.config/provael/keys: outside any work tree)",
    )
    .option("--force", "replace keys that already exist there")
    .option("--json", "print JSON")
    .action((flags: { out?: string; force?: boolean; json?: boolean }) => {
      const out = flags.out ?? defaultKeyDir();
      const written = writeKeyPair(out, generateKeyPair(), flags.force === true);
      const tree = enclosingWorkTree(out);
      if (tree) {
        process.stderr.write(
          `provael: warning: ${written.privatePath} is inside the git work tree ${tree}, where \`git add .\` would pick it up; move it out, or add it to .gitignore\n`,
        );
      }
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(written)}\n`);
        return;
      }
      process.stdout.write(
        `wrote ${written.privatePath} (keep it secret) and ${written.publicPath}\nkeyid ${written.keyid}\n`,
      );
    });
}

export function registerAttestCommand(program: Command): void {
  program
    .command("attest")
    .requiredOption("--in <dir>", "run directory")
    .requiredOption("--key <pem>", "Ed25519 private key (provael keygen)")
    .option("--out <file>", "attestation file to write (default: DIR/attestation.dsse.json)")
    .option("--json", "print JSON")
    .action((given: { in: string; key: string; out?: string; json?: boolean }) => {
      const flags = { ...given, out: given.out ?? join(given.in, "attestation.dsse.json") };
      checkOutputFile(flags.out, "--out");
      const key = readPrivateKey(flags.key);
      const envelope = attestRun(flags.in, key, systemClock);
      writeEnvelope(flags.out, envelope);
      const keyid = envelope.signatures[0]?.keyid ?? "";
      if (flags.json) {
        process.stdout.write(`${JSON.stringify({ out: flags.out, keyid })}\n`);
        return;
      }
      process.stdout.write(`wrote ${flags.out}, signed by ${keyid}\n`);
    });
}

export function registerVerify(program: Command): void {
  program
    .command("verify")
    .requiredOption("--in <file>", "attestation file (provael attest)")
    .option("--pubkey <pem>", "trust this public key")
    .option("--trust-store <file>", "trust the keys this trust store lists")
    .option("--report <dir>", "also check that this run's report.json is the attested one")
    .option("--json", "print JSON")
    .action(
      async (flags: {
        in: string;
        pubkey?: string;
        trustStore?: string;
        report?: string;
        json?: boolean;
      }) => {
        const json = flags.json === true;
        await withVerifyExit(json, () => {
          const trusted = trustedKeys(flags);
          const v = verifyAttestationFile(flags.in, trusted, {
            now: systemClock.now(),
            ...(flags.report === undefined ? {} : { reportDir: flags.report }),
          });
          const p = v.statement.predicate;
          if (json) {
            process.stdout.write(
              `${JSON.stringify({
                ok: true,
                keyid: v.keyid,
                subject: v.subjectDigest,
                report_checked: v.reportChecked,
                policy: p.run.policy,
                suite: p.run.suite,
                attested_at: p.attested_at,
              })}\n`,
            );
            return;
          }
          process.stdout.write(
            `verified: report.json ${v.subjectDigest} (${p.run.policy} on ${p.run.suite}), signed by ${v.keyLabel && v.keyLabel !== v.keyid ? `${v.keyid} (${v.keyLabel})` : v.keyid} at ${p.attested_at}\n${v.reportChecked ? "the report given is the attested one\n" : "no --report given: the report's bytes were not checked\n"}evidence, not certification\n`,
          );
        });
      },
    );
}
