/** Reading untrusted evidence files: a size cap first, strict decoding after. */
import { readFileSync, statSync } from "node:fs";
import { ProvaelError } from "../core/errors.js";

/** Evidence files larger than this are refused before they are read (10 MiB). */
export const MAX_EVIDENCE_BYTES = 10 * 1024 * 1024;

/**
 * A report.json larger than this is refused by `attest`, `verify --report` and `leaderboard`
 * before it is read (128 MiB). Fitted to what Provael writes: ~730 bytes per stub episode and
 * ~1,070 per tabletop episode, so a 5,400-cell sweep writes 3.9 MB (stub, measured) to ~6 MB
 * (tabletop), ~12 MB with `--compare-defenses`; the limit holds about 120,000 tabletop
 * episodes, and still bounds what an untrusted file can make a verifier parse.
 */
export const MAX_REPORT_BYTES = 128 * 1024 * 1024;

/**
 * Reads a file for verification, refusing a missing file (io/read) and one over the size cap
 * (evidence/malformed) before any byte is parsed.
 */
export function readEvidenceFile(path: string, what: string, max = MAX_EVIDENCE_BYTES): Buffer {
  let size: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new Error("not a regular file");
    size = st.size;
  } catch (e) {
    throw new ProvaelError("io/read", `cannot read ${what} ${path}: ${(e as Error).message}`, {
      details: { path },
      cause: e,
    });
  }
  if (size > max) {
    throw new ProvaelError(
      "evidence/malformed",
      `${what} ${path} is ${size} bytes, over the ${max}-byte limit`,
      {
        details: { path, size, max },
        hint: "pass the file Provael wrote, not a bundle or archive",
      },
    );
  }
  return readFileSync(path);
}

/** Decodes UTF-8 strictly: a byte sequence that is not UTF-8 is malformed, never replaced. */
export function decodeUtf8(bytes: Uint8Array, what: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch (e) {
    throw new ProvaelError("evidence/malformed", `${what} is not valid UTF-8`, { cause: e });
  }
}

/** Parses JSON text, turning a syntax error into evidence/malformed naming the input. */
export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new ProvaelError("evidence/malformed", `${what} is not JSON: ${(e as Error).message}`, {
      cause: e,
    });
  }
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Standard base64 (RFC 4648 §4, padded), decoded strictly: Node's decoder skips bad characters
 * and ignores stray bits, which would let a changed byte pass unnoticed.
 */
export function decodeBase64Strict(text: string, what: string): Buffer {
  const bytes = BASE64.test(text) ? Buffer.from(text, "base64") : null;
  if (bytes === null || bytes.toString("base64") !== text) {
    throw new ProvaelError("evidence/malformed", `${what} is not canonical base64`, {
      hint: "DSSE fields are standard base64 with padding (RFC 4648 §4)",
    });
  }
  return bytes;
}
