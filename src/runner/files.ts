import { closeSync, fsyncSync, openSync, renameSync, writeSync } from "node:fs";

/** Writes a file atomically (temp file, fsync, rename), so a crash never leaves half a file. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, "w");
  try {
    writeSync(fd, typeof data === "string" ? Buffer.from(data) : data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}
