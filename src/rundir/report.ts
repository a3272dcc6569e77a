/**
 * report.json, read and validated. The whole file is checked against the zod schema (not only
 * its `schema` field), then across fields (names, and numbers: src/rundir/report-consistency.ts),
 * so every reader (report, verdict, the regression gate, merge, calibrate, attest, leaderboard,
 * compliance, SARIF, the viewer) gets a well-formed report whose numbers agree, or a usage error
 * naming the first bad field, with every issue listed below it.
 */
import { readFileSync, statSync } from "node:fs";
import { MAX_JSON_DEPTH, tooDeep } from "../core/canonical-json.js";
import { ProvaelError } from "../core/errors.js";
import { allIssues } from "../core/zod-issues.js";
import { consistencyIssues } from "./report-consistency.js";
import { type ReportFile, reportSchema } from "./schema/index.js";

/** Issues shown in a message; a report broken everywhere would otherwise print megabytes. */
const MAX_ISSUES = 20;

export interface ReadReport {
  report: ReportFile;
  /** The file's bytes (their SHA-256 is the run's digest). */
  bytes: Buffer;
}

/** Validates report.json text; `what` names it in errors (a path, or `--baseline PATH`). */
export function parseReport(bytes: Buffer, what: string): ReportFile {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (e) {
    throw new ProvaelError("io/malformed", `${what} is not a Provael report: not UTF-8 text`, {
      cause: e,
      hint: "pass the report.json a `provael attack` run wrote",
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ProvaelError(
      "io/malformed",
      `${what} is not a Provael report: not JSON (${(e as Error).message})`,
      { cause: e, hint: "pass the report.json a `provael attack` run wrote" },
    );
  }
  // Loose fields (policy_options, attack_params, a bridged task) hold anything: bounded before
  // any recursive consumer (canonical JSON, the renderers) sees them.
  const deep = tooDeep(value);
  if (deep !== null) {
    throw new ProvaelError(
      "io/malformed",
      `${what} is not a valid Provael report: first bad field '${deep}' (nests deeper than ${MAX_JSON_DEPTH} levels)`,
      {
        details: { field: deep, issues: 1 },
        hint: "report.json files are written by `provael attack` and `provael merge`; this one was edited, damaged or written by another tool",
      },
    );
  }
  const parsed = reportSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues;
    const first = issues[0];
    const field = first && first.path.length > 0 ? first.path.join(".") : "(the whole file)";
    const shown = allIssues(parsed.error);
    throw new ProvaelError(
      "io/malformed",
      `${what} is not a valid Provael report: first bad field '${field}' (${first?.message ?? "invalid"}); ${issues.length} issue(s):\n${shown}`,
      {
        details: { field, issues: issues.length },
        hint: "report.json files are written by `provael attack` and `provael merge`; this one was edited, damaged or written by another tool",
      },
    );
  }
  const report = parsed.data;
  const crossed = crossFieldIssues(report);
  // Names first (a count of an arm that does not exist means nothing), then the numbers.
  if (crossed.length === 0) crossed.push(...consistencyIssues(report));
  if (crossed.length > 0) {
    const first = crossed[0] as CrossIssue;
    const shown = crossed
      .slice(0, MAX_ISSUES)
      .map((i) => `✖ ${i.message}\n  → at ${i.path}`)
      .join("\n");
    const more = crossed.length > MAX_ISSUES ? `\n  … and ${crossed.length - MAX_ISSUES} more` : "";
    throw new ProvaelError(
      "io/malformed",
      `${what} is not a valid Provael report: first bad field '${first.path}' (${first.message}); ${crossed.length} issue(s):\n${shown}${more}`,
      {
        details: { field: first.path, issues: crossed.length },
        hint: "report.json files are written by `provael attack` and `provael merge`; this one was edited, damaged or written by another tool",
      },
    );
  }
  return report;
}

interface CrossIssue {
  path: string;
  message: string;
}

/**
 * What the schema cannot say field by field: every name a report uses in one place exists where
 * it is defined (arms in `run.arms` and `arms`, tasks in `run.tasks`), so that no consumer
 * looks up an arm or a task that is not there.
 */
function crossFieldIssues(report: ReportFile): CrossIssue[] {
  const out: CrossIssue[] = [];
  const arms = new Set(report.run.arms);
  const tasks = new Set(report.run.tasks);
  const defined = new Set(Object.keys(report.arms));
  for (const a of report.run.arms)
    if (!defined.has(a))
      out.push({ path: "arms", message: `run.arms names '${a}', which has no entry in arms` });
  for (const a of defined)
    if (!arms.has(a)) out.push({ path: `arms.${a}`, message: `arm '${a}' is not in run.arms` });
  for (const [a, arm] of Object.entries(report.arms)) {
    // `matches` may name an attack the run did not play (a control run on its own): not checked.
    const vs = (arm as { vs_attack?: { arm?: string } | null }).vs_attack;
    if (vs?.arm !== undefined && !defined.has(vs.arm))
      out.push({
        path: `arms.${a}.vs_attack.arm`,
        message: `names '${vs.arm}', which is not an arm of the run`,
      });
  }
  for (const [t, byArm] of Object.entries(report.by_task)) {
    if (!tasks.has(t))
      out.push({ path: `by_task.${t}`, message: `task '${t}' is not in run.tasks` });
    for (const a of Object.keys(byArm))
      if (!defined.has(a))
        out.push({ path: `by_task.${t}.${a}`, message: `arm '${a}' is not an arm of the run` });
  }
  report.episodes.forEach((e, i) => {
    if (!defined.has(e.arm))
      out.push({ path: `episodes.${i}.arm`, message: `arm '${e.arm}' is not an arm of the run` });
    if (!tasks.has(e.task))
      out.push({ path: `episodes.${i}.task`, message: `task '${e.task}' is not in run.tasks` });
  });
  return out;
}

/**
 * The one place report.json's bytes are read from disk: every reader (readRun, readReportFile,
 * the commit check, attestations) comes here. `maxBytes` refuses a file over a size before any
 * of it is read (evidence from elsewhere).
 */
export function readReportBytes(path: string, what = path, maxBytes?: number): Buffer {
  try {
    if (maxBytes !== undefined) {
      const st = statSync(path);
      if (!st.isFile()) throw new Error("not a regular file");
      if (st.size > maxBytes) {
        throw new ProvaelError(
          "io/malformed",
          `${what} is ${st.size} bytes, over the ${maxBytes}-byte limit`,
          {
            details: { path, size: st.size, max: maxBytes },
            hint: `no report Provael writes comes near ${Math.round(maxBytes / 2 ** 20)} MiB (a 5,400-cell sweep writes about 6 MB): this file was padded, or is not a report`,
          },
        );
      }
    }
    return readFileSync(path);
  } catch (e) {
    if (e instanceof ProvaelError) throw e;
    throw new ProvaelError("io/read", `cannot read ${what}: ${(e as Error).message}`, {
      cause: e,
      details: { path },
    });
  }
}

/** Reads and validates a report.json file named directly (`--baseline OLD/report.json`). */
export function readReportFile(
  path: string,
  what = path,
  options: { maxBytes?: number } = {},
): ReadReport {
  const bytes = readReportBytes(path, what, options.maxBytes);
  return { report: parseReport(bytes, what), bytes };
}
