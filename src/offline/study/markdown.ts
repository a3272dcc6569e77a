/** The offline study's markdown report: a pure function of offline-study.json. */
import type { Rate } from "../../stats/index.js";

type Obj = Record<string, unknown>;

/** "3/10 = 30.0% [10.8%, 60.3%]", or why there is no figure. */
export function pct(r: unknown): string {
  const x = r as (Rate & { withheld?: boolean }) | undefined;
  if (!x) return "n/a";
  if (x.withheld) return `withheld (n = ${x.n})`;
  if (x.rate === null || !x.interval) return `n/a (n = ${x.n})`;
  const p = (v: number) => `${(v * 100).toFixed(1)}%`;
  return `${x.successes}/${x.n} = ${p(x.rate)} [${p(x.interval.low)}, ${p(x.interval.high)}]`;
}

function dist(s: unknown): string {
  const x = s as { n: number; median: number | null; p95: number | null; withheld?: boolean };
  if (x.withheld) return `withheld (n = ${x.n})`;
  if (x.median === null || x.p95 === null) return "n/a";
  return `median ${x.median.toFixed(3)}, p95 ${x.p95.toFixed(3)} (n = ${x.n})`;
}

export function renderStudyMarkdown(result: Obj): string {
  const r = result as Obj & {
    plan: { digest: string; registered_at: string };
    dataset: Obj;
    policy: Obj;
    attack: { id: string; controls: string[] };
    frames: Obj;
    measurement: { dims: number[]; dim_names: string[] };
    envelope: {
      target_fpr: number;
      n: number;
      rank: number;
      low: number[];
      high: number[];
      tail_level: number;
    };
    exclusions: { benign_exits: unknown; headline_valid: boolean };
    arms: Record<
      string,
      {
        role: string;
        divergence: { l2: unknown; per_dim: unknown[] };
        exits: unknown;
        changed: unknown;
      }
    >;
    competence: {
      agreement: { tolerance: number; per_dim: unknown[]; all_dims: unknown };
      closed_loop: Obj;
      competent: boolean;
      reasons: string[];
      decided_by?: string;
      decided_by_reason?: string;
      summary?: string;
    };
    headline: { claim: string; reading: string; exits: unknown };
    claim_limits: string[];
    evidence: { rung: string };
  };
  const lines: string[] = [];
  lines.push(
    `# Offline study: ${String(r.policy.id)} × ${r.attack.id}${r.dry_run ? " (dry run)" : ""}`,
  );
  lines.push("");
  lines.push(
    "**Open loop. Nothing was executed.** Recorded frames were passed through the policy; no robot or simulator acted on its output.",
  );
  lines.push("");
  lines.push(`- plan ${r.plan.digest}, registered ${r.plan.registered_at}`);
  lines.push(
    `- dataset ${String(r.dataset.digest)} (${String(r.dataset.codebase_version)}, robot_type ${JSON.stringify(r.dataset.robot_type)}, ${String(r.dataset.source)})`,
  );
  lines.push(
    `- policy ${String(r.policy.id)}${r.policy.digest ? ` ${String(r.policy.digest)}` : ""}; evidence rung \`${r.evidence.rung}\``,
  );
  lines.push(
    `- frames: ${String(r.frames.calibration)} calibration, ${String(r.frames.scored)} scored, ${String(r.frames.excluded)} excluded, ${String(r.frames.counted)} counted`,
  );
  lines.push("");
  lines.push("## Headline");
  lines.push("");
  lines.push(`${r.headline.claim}`);
  lines.push("");
  lines.push(
    `Envelope exits: ${pct(r.headline.exits)} (95% Wilson). Reading: ${r.headline.reading}.`,
  );
  lines.push("");
  lines.push("## Arms (scored frames)");
  lines.push("");
  lines.push("| arm | role | divergence L2 (normalised) | action changed | envelope exits |");
  lines.push("| --- | --- | --- | --- | --- |");
  for (const [id, a] of Object.entries(r.arms)) {
    lines.push(
      `| ${id} | ${a.role} | ${dist(a.divergence.l2)} | ${pct(a.changed)} | ${pct(a.exits)} |`,
    );
  }
  lines.push("");
  lines.push("Per-dimension divergence (|attacked − benign| / scale):");
  lines.push("");
  lines.push(`| arm | ${r.measurement.dim_names.join(" | ")} |`);
  lines.push(`| --- | ${r.measurement.dims.map(() => "---").join(" | ")} |`);
  for (const [id, a] of Object.entries(r.arms)) {
    lines.push(`| ${id} | ${a.divergence.per_dim.map(dist).join(" | ")} |`);
  }
  lines.push("");
  lines.push("## Envelope and exclusions");
  lines.push("");
  lines.push(
    `Fitted on ${r.envelope.n} calibration frames (disjoint episodes) at a ${r.envelope.target_fpr} false-positive target: per dimension and tail the order statistic of rank ${r.envelope.rank} (level ${r.envelope.tail_level.toPrecision(3)}).`,
  );
  lines.push("");
  lines.push(`| | ${r.measurement.dim_names.join(" | ")} |`);
  lines.push(`| --- | ${r.measurement.dims.map(() => "---").join(" | ")} |`);
  if (r.envelope.low) {
    lines.push(`| low | ${r.envelope.low.map((v) => v.toFixed(4)).join(" | ")} |`);
    lines.push(`| high | ${r.envelope.high.map((v) => v.toFixed(4)).join(" | ")} |`);
  }
  lines.push("");
  const spans = (r.envelope as { spans_recorded_range?: number[] }).spans_recorded_range ?? [];
  if (spans.length > 0) {
    lines.push(
      `On ${spans.map((d) => r.measurement.dim_names[r.measurement.dims.indexOf(d)]).join(", ")} the envelope spans every recorded command: an exit there needs a command beyond anything in the data.`,
    );
    lines.push("");
  }
  lines.push(
    `Benign commands of the scored frames outside the envelope (excluded, reported apart): ${pct(r.exclusions.benign_exits)}; headline ${r.dry_run ? "validity withheld" : r.exclusions.headline_valid ? "valid" : "INVALID"}.`,
  );
  lines.push("");
  lines.push("## Competence control");
  lines.push("");
  lines.push(
    `Benign action agrees with the recorded action (within ${r.competence.agreement.tolerance} × scale):`,
  );
  lines.push("");
  lines.push(`| ${r.measurement.dim_names.join(" | ")} | all |`);
  lines.push(`| ${r.measurement.dims.map(() => "---").join(" | ")} | --- |`);
  lines.push(
    `| ${r.competence.agreement.per_dim.map(pct).join(" | ")} | ${pct(r.competence.agreement.all_dims)} |`,
  );
  lines.push("");
  const cl = r.competence.closed_loop as {
    success?: unknown;
    suite?: string;
    available?: boolean;
    reason?: string;
  };
  const planned = (cl as { planned?: unknown[] }).planned;
  lines.push(
    cl.success
      ? `Closed-loop clean success on the scored episodes' scenes (${cl.suite}): ${pct(cl.success)}.`
      : planned
        ? `Closed-loop control on ${cl.suite}: ${planned.length} episode(s), not played in a dry run.`
        : `Closed-loop control: not available (${cl.reason}).`,
  );
  lines.push("");
  if (r.competence.summary) lines.push(`Competence: ${r.competence.summary}.`, "");
  lines.push(
    r.dry_run
      ? "Dry run: no competence verdict."
      : r.competence.competent
        ? `Competent by the registered rule (decided by ${r.competence.decided_by ?? "agreement"}).`
        : `Not shown competent (decided by ${r.competence.decided_by ?? "agreement"}): ${r.competence.reasons.join("; ")}.`,
  );
  if (r.competence.decided_by_reason) lines.push("", `Rule: ${r.competence.decided_by_reason}.`);
  lines.push("");
  lines.push("## Claim limits");
  lines.push("");
  for (const l of r.claim_limits) lines.push(`- ${l}`);
  lines.push("");
  return `${lines.join("\n")}\n`;
}
