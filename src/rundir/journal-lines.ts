/**
 * The lines of journal.jsonl, apart from the file (browser-safe): the header a journal opens
 * with, and each line as written, with its checksum. journal.ts writes them to disk; a page
 * builds the same lines in memory.
 */
import { canonicalJson } from "../core/canonical-json.js";
import type { TrajectoryStep } from "../core/episode.js";
import { TOOL_VERSION } from "../core/package-root.js";
import { type PlanSpec, planDigest } from "../core/plan.js";
import { JOURNAL_FORMAT } from "../core/protocol.js";
import { type JournalEpisodeLine, type JournalHeaderFile, lineSum } from "./schema/journal.js";

type JournalHeader = Omit<JournalHeaderFile, "sum">;
type JournalEpisode = Omit<JournalEpisodeLine, "sum">;

/**
 * The header a new journal opens with, for a played run and a bridged one alike: the plan, its
 * digest and this build's version, which resume and merge compare, beside who ran it.
 */
export function journalHeader(
  plan: PlanSpec,
  run: Pick<JournalHeader, "shard" | "policy_digest" | "served_model" | "bridge">,
): JournalHeader {
  return {
    type: "header",
    format: JOURNAL_FORMAT,
    tool_version: TOOL_VERSION,
    plan,
    plan_digest: planDigest(plan),
    shard: run.shard,
    policy_digest: run.policy_digest,
    ...(run.served_model ? { served_model: run.served_model } : {}),
    ...(run.bridge ? { bridge: run.bridge } : {}),
  };
}

/** One journal line: the value with its checksum, as JSON and a newline. */
export function journalLine(value: JournalHeader | JournalEpisode): string {
  // A header copied from a scanned journal (merge) carries no stale sum: the content is summed.
  const { sum: _, ...content } = value as typeof value & { sum?: unknown };
  return `${JSON.stringify({ ...content, sum: lineSum(content) })}\n`;
}

/** One episode's lines of trajectories.jsonl ("" for an episode with no steps: no lines). */
export function trajectoryLines(steps: readonly TrajectoryStep[]): string {
  return steps.length === 0 ? "" : `${steps.map((st) => canonicalJson(st)).join("\n")}\n`;
}
