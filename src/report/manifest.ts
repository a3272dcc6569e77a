/**
 * `execution-manifest.json`: everything about the machine and the clock that `report.json` must
 * not hold. It names the report by its digest. A field that cannot be filled is listed in
 * `missing_fields`, never invented.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { arch, cpus, platform, release } from "node:os";
import { join } from "node:path";
import type { Clock } from "../core/clock.js";
import { sha256 } from "../core/digest.js";
import { PACKAGE_ROOT } from "../core/package-root.js";
import { MANIFEST_SCHEMA } from "../core/protocol.js";
import { REDACTED, redactArgv, redactText } from "../core/redact.js";
import type { ManifestFile } from "../rundir/schema/index.js";
import { PROTOCOL, REPORT_SCHEMA } from "./build.js";

/** The manifest's type is inferred from its schema (src/rundir/schema/manifest.ts). */
export type ExecutionManifest = ManifestFile;

/** Environment variables worth recording; anything that looks secret is redacted. */
const ENV_ALLOW =
  /^(PROVAEL_|CI$|GITHUB_(SHA|REF|RUN_ID|RUN_ATTEMPT|WORKFLOW|REPOSITORY)$|NODE_OPTIONS$|UV_THREADPOOL_SIZE$|SLURM_(JOB_ID|ARRAY_TASK_ID)$|JOB_COMPLETION_INDEX$)/;
const SECRET = /(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|AUTH)/i;

export function allowListedEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(env).sort()) {
    const value = env[name];
    if (value === undefined || !ENV_ALLOW.test(name)) continue;
    out[name] = SECRET.test(name) ? REDACTED : redactText(value);
  }
  return out;
}

function gitInfo(cwd: string): { commit: string; dirty: boolean } | null {
  try {
    const opts = {
      cwd,
      stdio: ["ignore", "pipe", "ignore"] as ["ignore", "pipe", "ignore"],
      encoding: "utf8" as const,
      timeout: 5000,
    };
    const commit = execFileSync("git", ["rev-parse", "HEAD"], opts).trim();
    const dirty = execFileSync("git", ["status", "--porcelain"], opts).trim().length > 0;
    return /^[0-9a-f]{40}$/.test(commit) ? { commit, dirty } : null;
  } catch {
    return null;
  }
}

export interface ManifestInput {
  reportDigest: string;
  trajectoriesDigest: string;
  planDigest: string;
  toolVersion: string;
  shard: string | null;
  startedAt: number;
  clock: Clock;
  /** Recorded with secret flags, secret options and URL credentials redacted. */
  commandLine: string[];
  /** Secret values to redact wherever they appear in the command line (core/redact.ts). */
  secrets?: readonly string[];
  resumed: boolean;
  extra?: Record<string, unknown>;
}

export function buildManifest(input: ManifestInput): ExecutionManifest {
  const missing: string[] = [];
  const cpuList = cpus();
  const model = cpuList[0]?.model ?? null;
  if (model === null) missing.push("cpu.model");
  const git = gitInfo(process.cwd());
  if (git === null) missing.push("git");
  const lockPath = join(PACKAGE_ROOT, "package-lock.json");
  const lockfile = existsSync(lockPath) ? sha256(readFileSync(lockPath)) : null;
  if (lockfile === null) missing.push("lockfile_digest");
  return {
    manifest: MANIFEST_SCHEMA,
    protocol_id: "provael-redteam",
    protocol_version: PROTOCOL,
    tool_version: input.toolVersion,
    report_schema: REPORT_SCHEMA,
    report_digest: input.reportDigest,
    trajectories_digest: input.trajectoriesDigest,
    plan_digest: input.planDigest,
    shard: input.shard,
    started_at: new Date(input.startedAt).toISOString(),
    finished_at: new Date(input.clock.now()).toISOString(),
    os: { platform: platform(), release: release(), arch: arch() },
    node_version: process.version,
    cpu: { model, cores: cpuList.length },
    git,
    lockfile_digest: lockfile,
    command_line: redactArgv(input.commandLine, input.secrets),
    environment: allowListedEnvironment(process.env),
    resumed: input.resumed,
    missing_fields: missing,
    ...(input.extra ?? {}),
  };
}
