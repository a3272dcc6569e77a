/** How many cells a run's journal plans (browser-safe: the page that opens run directories too). */
import type { JournalHeaderFile } from "./schema/journal.js";

/** Cells a plan (or one shard `k/N` of it) holds. */
export function plannedCells(header: Pick<JournalHeaderFile, "plan" | "shard">): number {
  const p = header.plan;
  const total = p.tasks.length * p.arms.length * p.seeds * p.repeats;
  const m = header.shard ? /^(\d+)\/(\d+)$/.exec(header.shard) : null;
  if (!m) return total;
  const k = Number(m[1]);
  const n = Number(m[2]);
  return Math.floor(total / n) + (k < total % n ? 1 : 0);
}
