/** Byte comparisons that need no Node `Buffer` (browser-safe). */

/** Whether two byte arrays hold the same bytes. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a === b) return true;
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The bytes under a typed array (a view, no copy). */
export const bytesOf = (v: ArrayBufferView): Uint8Array =>
  new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
