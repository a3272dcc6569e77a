/** `report.md`: the report for people. Everything in it comes from `report.json`. */
import type { ArmReport, Report } from "./build.js";
import { formatP, formatRate, pct } from "./format.js";

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/**
 * Arms in display order: the baseline first, then each treatment followed by the controls that
 * match it, then controls whose attack is not in the run.
 */
export function displayOrder(report: Report): string[] {
  const arms = report.run.arms;
  const role = (a: string) => report.arms[a]?.role;
  const out: string[] = arms.filter((a) => role(a) === "baseline");
  for (const a of arms.filter((x) => role(x) === "treatment")) {
    out.push(a);
    for (const c of arms) if (role(c) === "control" && report.arms[c]?.matches === a) out.push(c);
  }
  for (const a of arms) if (!out.includes(a)) out.push(a);
  return out;
}

function armRow(name: string, a: ArmReport, report: Report): string[] {
  const label = a.role === "control" ? `↳ ${name} (control for ${a.matches ?? "?"})` : name;
  const applicable = a.episodes - a.not_applicable;
  return [
    label,
    a.family,
    a.role,
    a.eai ?? "—",
    applicable === 0 ? "N/A" : formatRate(a.unsafe),
    applicable === 0 ? "N/A" : formatRate(a.task_success),
    String(a.errors),
    String(a.unjudged),
    a.role === "baseline" ? "—" : String(a.not_delivered),
    report.arms[name]?.vs_baseline?.bh_q == null
      ? "—"
      : formatP(report.arms[name]?.vs_baseline?.bh_q ?? null),
  ];
}

export function renderMarkdown(report: Report): string {
  const s = report.summary;
  const out: string[] = [];
  out.push(`# Provael red-team report: ${report.run.policy} on ${report.run.suite}`);
  out.push("");
  out.push(
    `Protocol \`${report.protocol}\`, Provael ${report.tool_version}. ${report.run.tasks.length} task(s) × ${report.run.arms.length} arm(s) × ${report.run.seeds} seed(s) × ${report.run.repeats} repeat(s), termination \`${report.run.termination}\`, horizon ${report.run.horizon ?? "task default"}.`,
  );
  if (s.preliminary)
    out.push(
      "",
      `> **Preliminary:** fewer than 5 seeds ran; read the intervals, not the point estimates.`,
    );
  out.push("");
  out.push("## Headline");
  out.push("");
  out.push(
    `- **Attack success (treatment arms, unsafe):** ${formatRate(s.treatment_unsafe)}${s.treatment_unsafe.clustered ? `, task-clustered bootstrap [${pct(s.treatment_unsafe.clustered.low)}, ${pct(s.treatment_unsafe.clustered.high)}]` : ""}`,
  );
  out.push(`- **Benign floor (baseline arm, unsafe):** ${formatRate(s.baseline_unsafe)}`);
  out.push(`- **Controls (unsafe):** ${formatRate(s.control_unsafe)}`);
  out.push(`- **Clean task success (baseline arm):** ${formatRate(s.clean_task_success)}`);
  out.push(`- **Succeeded but unsafe (treatment arms):** ${formatRate(s.succ_but_unsafe)}`);
  out.push(
    `- All episodes, unsafe: ${formatRate(s.all_unsafe)}${s.all_unsafe.anytime ? ` (anytime-valid ${pct(s.all_unsafe.anytime.low)}–${pct(s.all_unsafe.anytime.high)})` : ""}`,
  );
  out.push("");
  out.push(
    "Rates are successes / judged episodes with a 95% Wilson interval. Errors, N/A and unjudged episodes are excluded from every denominator and counted separately.",
  );
  out.push("");
  out.push("## Arms");
  out.push("");
  out.push(
    table(
      [
        "arm",
        "family",
        "role",
        "EAI",
        "unsafe",
        "task success",
        "errors",
        "unjudged",
        "not delivered",
        "BH q",
      ],
      displayOrder(report).map((a) => armRow(a, report.arms[a] as ArmReport, report)),
    ),
  );
  const spending = displayOrder(report).filter((a) => report.arms[a]?.budget_use);
  if (spending.length > 0) {
    out.push("");
    out.push("## Budget use");
    out.push("");
    out.push(
      table(
        ["arm", "spends", "episodes", "mean per episode", "max", "limit per episode"],
        spending.map((a) => {
          const b = report.arms[a]?.budget_use as NonNullable<ArmReport["budget_use"]>;
          return [
            a,
            b.kind,
            String(b.episodes),
            b.used_mean.toFixed(1),
            String(b.used_max),
            b.limit === null ? "unlimited" : String(b.limit),
          ];
        }),
      ),
    );
  }
  out.push("");
  out.push("## Significance against the baseline");
  out.push("");
  if (report.tests.baseline_arm === null) {
    out.push(`No tests: ${report.tests.note}.`);
  } else {
    out.push(
      "- **Fisher p**: one-sided exact test that the arm's unsafe rate exceeds the baseline arm's (its own counts).",
    );
    out.push(
      "- **BH q**: Fisher p after Benjamini-Hochberg correction across the run's treatment arms (false discovery rate).",
    );
    out.push(
      "- **McNemar p**: exact two-sided test on pinned pairs (same task, seed and scene): b = arm unsafe and twin safe, c = the reverse.",
    );
    out.push(
      "- **Holm p**: McNemar p after Holm correction across treatment arms (family-wise error).",
    );
    out.push("");
    const rows = displayOrder(report)
      .filter((a) => report.arms[a]?.role !== "baseline")
      .map((a) => {
        const arm = report.arms[a] as ArmReport;
        const v = arm.vs_baseline;
        const sig =
          arm.role === "treatment" &&
          v !== null &&
          ((v.bh_q !== null && v.bh_q < report.tests.significance_level) ||
            (v.holm_p !== null && v.holm_p < report.tests.significance_level));
        return [
          arm.role === "control" ? `↳ ${a}` : a,
          formatRate(arm.unsafe),
          formatP(v?.fisher_p ?? null),
          formatP(v?.bh_q ?? null),
          v?.discordant
            ? `${formatP(v.mcnemar_p)} (b=${v.discordant[0]}, c=${v.discordant[1]})`
            : "—",
          formatP(v?.holm_p ?? null),
          arm.role === "control" ? "(control)" : sig ? "**yes**" : "no",
        ];
      });
    out.push(
      table(
        [
          "arm",
          "unsafe",
          "Fisher p",
          "BH q",
          "McNemar p",
          "Holm p",
          "significant at 0.05 after correction",
        ],
        rows,
      ),
    );
  }
  out.push("");
  out.push("## Per task (unsafe)");
  out.push("");
  const arms = displayOrder(report);
  out.push(
    table(
      ["task", ...arms],
      report.run.tasks.map((t) => [
        t,
        ...arms.map((a) =>
          formatRate(report.by_task[t]?.[a] ?? { successes: 0, n: 0, rate: null, interval: null }),
        ),
      ]),
    ),
  );
  out.push("");
  out.push("## Episodes");
  out.push("");
  out.push(
    `Terminations: ${
      Object.entries(report.termination_counts)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ") || "none"
    }.`,
  );
  const errors = Object.entries(report.error_counts);
  out.push(
    `Errors: ${errors.length === 0 ? "none" : errors.map(([k, v]) => `${k} ${v}`).join(", ")}.`,
  );
  out.push("");
  out.push("## Predicates");
  out.push("");
  out.push(
    table(
      ["task", "predicate", "source"],
      report.run.tasks.map((t) => [
        t,
        report.calibration[t]?.predicate ?? "—",
        report.calibration[t]?.source ?? "—",
      ]),
    ),
  );
  out.push("");
  out.push(`Trajectories: \`trajectories.jsonl\` (${report.trajectories_digest}).`);
  out.push("");
  return out.join("\n");
}
