/** trajectories.jsonl: written once per finished run, from the journal's lines, in report order. */
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from "node:fs";
import { sha256Stream } from "../core/digest.js";
import { faultPoint, tempName } from "./files.js";
import { type FinishedCell, readTrajectory } from "./journal.js";
import { trajectoryLines } from "./journal-lines.js";

/** Streams trajectories to a file atomically, hashing as it goes; returns the file's digest. */
export function writeTrajectories(path: string, cells: (FinishedCell | undefined)[]): string {
  const tmp = tempName(path);
  const fd = openSync(tmp, "w");
  const hash = sha256Stream();
  try {
    for (const cell of cells) {
      if (!cell) continue;
      const text = trajectoryLines(readTrajectory(cell));
      if (text === "") continue;
      const chunk = Buffer.from(text);
      writeSync(fd, chunk);
      hash.update(chunk);
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  faultPoint(path);
  renameSync(tmp, path);
  return hash.digest();
}
