/**
 * The browser twin of `digest.ts` (same exports, same digests): SHA-256 from @noble/hashes, since
 * a page has no `node:crypto` and Web Crypto's digest is asynchronous. The bundle swaps this file
 * in for `digest.ts` (scripts/build-playground.mjs); Node keeps its native hash.
 */
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { canonicalJson } from "./canonical-json.js";

export type Digest = `sha256:${string}`;

const bytesOf = (data: Uint8Array | string): Uint8Array =>
  typeof data === "string" ? new TextEncoder().encode(data) : data;

export function sha256(data: Uint8Array | string): Digest {
  return `sha256:${bytesToHex(nobleSha256(bytesOf(data)))}`;
}

export function sha256Bytes(data: Uint8Array | string): Uint8Array {
  return nobleSha256(bytesOf(data));
}

export function digestJson(value: unknown): Digest {
  return sha256(canonicalJson(value));
}

export function sha256Stream(): { update(chunk: Uint8Array | string): void; digest(): Digest } {
  const h = nobleSha256.create();
  return {
    update(chunk) {
      h.update(bytesOf(chunk));
    },
    digest() {
      return `sha256:${bytesToHex(h.digest())}`;
    },
  };
}
