/// <reference lib="dom" />
/**
 * The entries of a zip file (a `provael view --bundle` folder zipped, or a run directory), read
 * in the page: the central directory gives each entry's name and where its data lies; stored
 * entries are sliced, deflated ones inflated by the browser's own DecompressionStream. ZIP64 and
 * encrypted entries are refused by name.
 */

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

export class ZipError extends Error {}

/** One file of the archive: its path inside it and its bytes. */
export interface ZipEntry {
  path: string;
  file: Blob;
}

function endOfCentralDirectory(view: DataView): number {
  // The record is 22 bytes plus a comment of at most 65,535 bytes, at the very end.
  for (let i = view.byteLength - 22; i >= Math.max(0, view.byteLength - 22 - 65535); i--)
    if (view.getUint32(i, true) === EOCD) return i;
  throw new ZipError("not a zip file (no end of central directory)");
}

async function inflate(data: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([data as BlobPart])
    .stream()
    .pipeThrough(new DecompressionStream("deflate-raw"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Every file entry of the zip, with its path inside the archive. */
export async function readZip(blob: Blob): Promise<ZipEntry[]> {
  const buf = new Uint8Array(await blob.arrayBuffer());
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const eocd = endOfCentralDirectory(view);
  const count = view.getUint16(eocd + 10, true);
  let at = view.getUint32(eocd + 16, true);
  if (count === 0xffff || at === 0xffffffff) throw new ZipError("ZIP64 archives are not read here");
  const names = new TextDecoder();
  const out: ZipEntry[] = [];
  for (let k = 0; k < count; k++) {
    if (view.getUint32(at, true) !== CENTRAL) throw new ZipError("damaged zip central directory");
    const flags = view.getUint16(at + 8, true);
    const method = view.getUint16(at + 10, true);
    const compressed = view.getUint32(at + 20, true);
    const nameLen = view.getUint16(at + 28, true);
    const extraLen = view.getUint16(at + 30, true);
    const commentLen = view.getUint16(at + 32, true);
    const local = view.getUint32(at + 42, true);
    const path = names.decode(buf.subarray(at + 46, at + 46 + nameLen));
    at += 46 + nameLen + extraLen + commentLen;
    if (path.endsWith("/")) continue;
    if (flags & 1) throw new ZipError(`${path} is encrypted`);
    if (view.getUint32(local, true) !== LOCAL) throw new ZipError(`damaged zip entry ${path}`);
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    const raw = buf.subarray(start, start + compressed);
    let data: Uint8Array;
    if (method === 0) data = raw;
    else if (method === 8) data = await inflate(raw);
    else
      throw new ZipError(
        `${path} uses compression method ${method} (only stored and deflate are read)`,
      );
    out.push({ path, file: new Blob([data as BlobPart]) });
  }
  return out;
}
