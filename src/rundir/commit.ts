/**
 * The commit point of a run directory. `execution-manifest.json` is written last, after every
 * other output, and names each output by its digest (`outputs`). A directory without it, or whose
 * manifest does not name the report.json on disk, is unfinished, whatever else it holds: resume
 * writes its outputs again (they are deterministic) and then the manifest.
 */
import { closeSync, existsSync, openSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { type Digest, sha256, sha256Stream } from "../core/digest.js";
import { MANIFEST_SCHEMA } from "../core/protocol.js";
import { RUN_FILES } from "./files.js";
import { readReportBytes } from "./report.js";

const digest = z.string().regex(/^sha256:[0-9a-f]{64}$/);

/** The part of the manifest the commit check reads; the rest is the manifest's own business. */
export const commitSchema = z
  .object({
    manifest: z.literal(MANIFEST_SCHEMA),
    report_digest: digest,
    outputs: z.record(z.string(), digest),
  })
  .loose();

export type Commit = z.infer<typeof commitSchema>;

/** SHA-256 of a file, read in chunks (trajectories can be large). */
export function digestFile(path: string): Digest {
  const fd = openSync(path, "r");
  const hash = sha256Stream();
  const buf = Buffer.allocUnsafe(1 << 20);
  try {
    for (let pos = 0; ; ) {
      const n = readSync(fd, buf, 0, buf.length, pos);
      if (n === 0) break;
      hash.update(buf.subarray(0, n));
      pos += n;
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest();
}

/** Digests of the named outputs (paths relative to the run directory), sorted by name. */
export function outputDigests(dir: string, names: string[]): Record<string, Digest> {
  return Object.fromEntries([...names].sort().map((n) => [n, digestFile(join(dir, n))]));
}

/**
 * The run's commit record, or null when the run is unfinished: no manifest, a manifest from
 * before commit points (no `outputs`), one that does not parse, or one whose report digest is
 * not the report.json on disk, or that names an output that is missing.
 */
export function readCommit(dir: string): Commit | null {
  const path = join(dir, RUN_FILES.manifest);
  if (!existsSync(path)) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return null;
  }
  const parsed = commitSchema.safeParse(raw);
  if (!parsed.success) return null;
  const c = parsed.data;
  const reportPath = join(dir, RUN_FILES.report);
  if (!existsSync(reportPath) || sha256(readReportBytes(reportPath)) !== c.report_digest)
    return null;
  if (c.outputs[RUN_FILES.report] !== c.report_digest) return null;
  for (const name of Object.keys(c.outputs)) if (!existsSync(join(dir, name))) return null;
  return c;
}

export const isCommitted = (dir: string) => readCommit(dir) !== null;

/**
 * Whether a run directory's manifest exists and names the report.json on disk. Weaker than
 * `readCommit` (no `outputs` needed), for readers of directories written by other writers (the
 * bridge) whose manifests predate the outputs list.
 */
export function manifestNamesReport(dir: string): boolean {
  try {
    const m = JSON.parse(readFileSync(join(dir, RUN_FILES.manifest), "utf8")) as {
      report_digest?: unknown;
    };
    return m.report_digest === sha256(readReportBytes(join(dir, RUN_FILES.report)));
  } catch {
    return false;
  }
}
