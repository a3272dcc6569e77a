import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Directories this test file made; `removeTempDirs` (run after each file) deletes them. */
const made: string[] = [];

/** A fresh temporary directory for one test, removed when its test file ends. */
export function tempDir(prefix = "provael-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/**
 * Deletes the directories `tempDir` made in this test file. A full `npm test` makes a few hundred
 * of them, runs, journals and weights among them; left behind they fill /tmp by gigabytes over a
 * working day. `PROVAEL_KEEP_TEST_DIRS=1` keeps them, to look at what a failing test wrote.
 */
export function removeTempDirs(): void {
  if (process.env.PROVAEL_KEEP_TEST_DIRS === "1") return;
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}
