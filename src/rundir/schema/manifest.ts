/**
 * `execution-manifest.json`: what report.json must not hold (machine, clock, command line), the
 * report named by its digest, and the commit point's `outputs`. Fields beyond these (workers,
 * concurrency, shards of a merge) are kept as written.
 */
import { z } from "zod";
import { MANIFEST_SCHEMA, PROTOCOL, REPORT_SCHEMA } from "../../core/protocol.js";
import { verdictSchema } from "./verdict.js";

const digest = z.string().regex(/^sha256:[0-9a-f]{64}$/);

export const manifestSchema = z
  .object({
    manifest: z.literal(MANIFEST_SCHEMA),
    protocol_id: z.literal("provael-redteam"),
    protocol_version: z.literal(PROTOCOL),
    tool_version: z.string(),
    report_schema: z.literal(REPORT_SCHEMA),
    report_digest: digest,
    trajectories_digest: z.string(),
    plan_digest: z.string(),
    shard: z.string().nullable(),
    started_at: z.string(),
    finished_at: z.string(),
    os: z.object({ platform: z.string(), release: z.string(), arch: z.string() }).loose(),
    node_version: z.string(),
    cpu: z.object({ model: z.string().nullable(), cores: z.number().int() }).loose(),
    git: z.object({ commit: z.string(), dirty: z.boolean() }).loose().nullable(),
    lockfile_digest: z.string().nullable(),
    command_line: z.array(z.string()),
    environment: z.record(z.string(), z.string()),
    resumed: z.boolean(),
    missing_fields: z.array(z.string()),
    /** The commit point: every output by its digest (absent in manifests before commit points). */
    outputs: z.record(z.string(), digest).exactOptional(),
    /** What made the run: words its caveats' fixes (absent in older runs: `provael attack`). */
    made_by: z.enum(["attack", "library"]).exactOptional(),
    recipe: z.object({ name: z.string(), source: z.string() }).loose().exactOptional(),
    verdict: z.enum(["pass", "fail", "incomplete"]).exactOptional(),
    acceptance: verdictSchema.exactOptional(),
  })
  .loose();

export type ManifestFile = z.infer<typeof manifestSchema>;
