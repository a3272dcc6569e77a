/** Frames small in bytes and huge in decoded objects (issue 16 reproducers). */

/** msgpack array32 of `n` empty maps: 5 + n bytes, n decoded objects. */
export function emptyMaps(n: number): Uint8Array {
  const b = new Uint8Array(5 + n);
  b[0] = 0xdd;
  new DataView(b.buffer).setUint32(1, n);
  b.fill(0x80, 5);
  return b;
}

/** msgpack map32 of `n` entries 0 -> {}: 5 + 2n bytes. */
export function hugeMap(n: number): Uint8Array {
  const b = new Uint8Array(5 + 2 * n);
  b[0] = 0xdf;
  new DataView(b.buffer).setUint32(1, n);
  for (let i = 5; i < b.length; i += 2) b[i + 1] = 0x80;
  return b;
}
