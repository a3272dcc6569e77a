import { createHash } from "node:crypto";
import { canonicalJson } from "./canonical-json.js";

/** A SHA-256 digest written the way every Provael artefact records it: `sha256:<64 hex>`. */
export type Digest = `sha256:${string}`;

/** SHA-256 of raw bytes or a UTF-8 string, as `sha256:<hex>`. */
export function sha256(data: Uint8Array | string): Digest {
  return `sha256:${createHash("sha256").update(data).digest("hex")}`;
}

/** SHA-256 of raw bytes as 32 bytes (for seeding generators). */
export function sha256Bytes(data: Uint8Array | string): Uint8Array {
  return new Uint8Array(createHash("sha256").update(data).digest());
}

/** Digest of a JSON value in RFC 8785 canonical form, so key order never changes it. */
export function digestJson(value: unknown): Digest {
  return sha256(canonicalJson(value));
}

/** Incremental SHA-256 for streams (journals, trajectories, weight files). */
export function sha256Stream(): { update(chunk: Uint8Array | string): void; digest(): Digest } {
  const h = createHash("sha256");
  return {
    update(chunk) {
      h.update(chunk);
    },
    digest() {
      return `sha256:${h.digest("hex")}`;
    },
  };
}
