/**
 * What `provael attack` writes beside report.json, for a launched benchmark run: the verdict in
 * report.md, report.html, the SARIF log when asked, and the manifest (re-written last, the commit
 * point) with the launch recorded and every output's digest. The bridge has written report.json,
 * report.md, trajectories.jsonl and its manifest already.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Report } from "../../report/build.js";
import type { FinishOptions } from "../../report/finalize.js";
import { renderHtml } from "../../report/html.js";
import { renderMarkdown } from "../../report/markdown.js";
import { buildSarif } from "../../report/sarif.js";
import { decide, renderVerdict, type Verdict } from "../../report/verdict.js";
import { outputDigests } from "../../rundir/commit.js";
import { checkOutputFile, RUN_FILES, writeFileAtomic } from "../../rundir/files.js";

export async function completeOutputs(
  out: string,
  report: Report,
  digest: string,
  finish: FinishOptions,
  extra: Record<string, unknown>,
): Promise<{ verdict: Verdict | null }> {
  const verdict = finish.protocol ? decide(report, finish.protocol) : null;
  if (verdict)
    writeFileAtomic(
      join(out, RUN_FILES.markdown),
      `${renderMarkdown(report)}\n${renderVerdict(verdict)}`,
    );
  const outputs: string[] = [RUN_FILES.trajectories, RUN_FILES.report, RUN_FILES.markdown];
  if (finish.html !== false) {
    const html = await renderHtml(report, out, {
      clip: { kind: "none", reason: "a bridged run replays no episode for a clip" },
    });
    writeFileAtomic(join(out, RUN_FILES.html), html);
    outputs.push(RUN_FILES.html);
  }
  if (finish.sarifOut !== undefined) {
    checkOutputFile(finish.sarifOut, "--sarif-out");
    writeFileAtomic(finish.sarifOut, `${JSON.stringify(buildSarif(report), null, 2)}\n`);
  }
  const path = join(out, RUN_FILES.manifest);
  const manifest = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  if (manifest.report_digest !== digest)
    throw new Error(`the manifest names ${String(manifest.report_digest)}, not ${digest}`);
  const full = {
    ...manifest,
    ...extra,
    ...(finish.recipe ? { recipe: finish.recipe } : {}),
    ...(verdict ? { verdict: verdict.verdict, acceptance: verdict } : {}),
    outputs: outputDigests(out, outputs),
  };
  writeFileAtomic(path, `${JSON.stringify(full, null, 2)}\n`);
  return { verdict };
}
