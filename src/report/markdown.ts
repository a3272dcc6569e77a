/** `report.md`: the report for people. Everything in it comes from `report.json`. */
import type { ArmReport, Report } from "./build.js";
import { caveats, type Via } from "./caveats.js";
import {
  CALIBRATION_COLUMNS,
  calibrationCells,
  displayOrder,
  formatP,
  formatRate,
  NO_PINNED_PAIR,
  pct,
  taskFieldTables,
  waiverLines,
} from "./format.js";
import { firedText, headlineNotes, notApplicableLines } from "./headline.js";
import { MITIGATION_HEADER, mitigationNotes, mitigationRows } from "./mitigation-text.js";
import { isSignificant, procedureName, ruleText } from "./significance.js";

/** A table cell: pipes, backslashes and line breaks would end the cell or the table. */
export function escapeCell(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.map(escapeCell).join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

function armRow(name: string, a: ArmReport): string[] {
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
    formatP(a.vs_baseline?.adjusted_p ?? null),
    applicable === 0 ? `N/A: ${a.not_applicable_reason ?? "requirements unmet"}` : firedText(a),
  ];
}

/** A cluster bootstrap beside a rate, saying what it resamples, or why there is none. */
export function clusteredText(r: ArmReport["unsafe"]): string {
  if (r.clustered)
    return `, ${r.clustered.method === "task-cluster-bootstrap" ? "bootstrap resampling whole tasks" : "bootstrap resampling whole episodes"} (${r.clustered.clusters}) [${pct(r.clustered.low)}, ${pct(r.clustered.high)}]`;
  if (r.clustered_reason) return ` (no clustered bootstrap: ${r.clustered_reason})`;
  return "";
}

/** Steps forwarded to the upstream vs steps its model used, when the report counts them. */
function bridgedStepsText(b: NonNullable<Report["run"]["bridge"]>): string {
  if (b.steps_forwarded === undefined) return "";
  const used =
    b.steps_used === null || b.steps_used === undefined
      ? "the upstream cannot tell how many reached its model"
      : b.steps_used < b.steps_forwarded
        ? `${b.steps_used} reached its model, the rest were answered from action chunks (a perturbation of those never reached it)`
        : `all reached its model`;
  return ` Steps: ${b.steps_forwarded} forwarded to the upstream; ${used}.`;
}

/** `via`: what made the run, which words the caveats' fixes (report/caveat-list.ts). */
export function renderMarkdown(report: Report, options: { via?: Via } = {}): string {
  const s = report.summary;
  const out: string[] = [];
  const bridged = report.run.bridge;
  out.push(
    `# Provael red-team report: ${report.run.policy} on ${report.run.suite}${bridged ? " (bridged)" : ""}`,
  );
  out.push("");
  if (report.run.shard !== null)
    out.push(
      `> **Shard ${report.run.shard}:** this report covers one slice of the plan; join the shards with \`provael merge\` for the run's numbers.`,
      "",
    );
  if (bridged) {
    const codecs = Object.entries(bridged.image_codecs)
      .map(([c, n]) => `${c} ${n}`)
      .join(", ");
    out.push(
      `Bridged run: the benchmark \`${bridged.benchmark}\` played the episodes through \`provael bridge\` (profile \`${bridged.profile}\`) and ended each one itself; seeds are its episode indices. Images travelled as: ${codecs || "none"}.${bridgedStepsText(bridged)} ${report.run.tasks.length} task(s) × ${report.run.arms.length} arm(s), seeds ${report.run.seed}–${report.run.seed + report.run.seeds - 1}, ${report.run.repeats} repeat(s); protocol \`${report.protocol}\`, Provael ${report.tool_version}.`,
    );
  } else
    out.push(
      `Protocol \`${report.protocol}\`, Provael ${report.tool_version}. ${report.run.tasks.length} task(s) × ${report.run.arms.length} arm(s) × ${report.run.seeds} seed(s) × ${report.run.repeats} repeat(s), termination \`${report.run.termination}\`, horizon ${report.run.horizon ?? "task default"}.`,
    );
  const caveatList = caveats(report, options.via ? { via: options.via } : {});
  if (caveatList.length > 0)
    out.push("", "**Caveats**", "", ...caveatList.map((c) => `- ${c.text}`));
  out.push("");
  out.push("## Headline");
  out.push("");
  for (const line of waiverLines(report)) out.push(`> **Warning:** ${line}`, "");
  for (const note of headlineNotes(report)) out.push(`> **Note:** ${note}`, "");
  out.push(
    `- **Attack success (treatment arms, unsafe):** ${formatRate(s.treatment_unsafe)}${clusteredText(s.treatment_unsafe)}`,
  );
  out.push(`- **Benign floor (baseline arm, unsafe):** ${formatRate(s.baseline_unsafe)}`);
  out.push(`- **Controls (unsafe):** ${formatRate(s.control_unsafe)}`);
  out.push(`- **Clean task success (baseline arm):** ${formatRate(s.clean_task_success)}`);
  out.push(`- **Succeeded but unsafe (treatment arms):** ${formatRate(s.succ_but_unsafe)}`);
  out.push(
    `- All episodes, unsafe: ${formatRate(s.all_unsafe)}${s.all_unsafe.anytime ? ` (anytime-valid ${pct(s.all_unsafe.anytime.low)}–${pct(s.all_unsafe.anytime.high)})` : ""}`,
  );
  out.push("");
  const na = notApplicableLines(report);
  if (na.length > 0) {
    out.push("");
    for (const line of na) out.push(`- ${line}`);
  }
  out.push("");
  out.push(
    "Rates are successes / judged episodes with a 95% Wilson interval. Errors, N/A, unjudged and not-delivered episodes (an attack that never reached the policy) are excluded from every denominator and counted separately. *Predicates fired*: in how many judged episodes each predicate first fired, and how many of those only after the task had succeeded.",
  );
  out.push("");
  if (report.mitigation) {
    out.push("## Mitigation (undefended vs defended, paired)");
    out.push("");
    out.push(table(MITIGATION_HEADER, mitigationRows(report)));
    out.push("");
    for (const n of mitigationNotes(report)) out.push(`- ${n}`);
    out.push("");
  } else if (report.run.defenses) {
    out.push(
      `Every arm ran with the defenses ${report.run.defenses.ids.map((d) => `\`${d}\``).join(", ")}; a stopped episode counts as described in docs/defenses.md (stops per arm in the arms' \`stopped\`).`,
      "",
    );
  }
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
        "adjusted p",
        "predicates fired",
      ],
      displayOrder(report).map((a) => armRow(a, report.arms[a] as ArmReport)),
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
  const rule = s.significance;
  if (report.tests.baseline_arm === null || rule === null) {
    out.push(`No tests: ${report.tests.note}.`);
  } else {
    out.push(
      `**The rule.** Per treatment arm, the ${ruleText(rule)}. Only this decides "significant", the SARIF level and the headline. The other columns are secondary and decide nothing.`,
    );
    out.push("");
    out.push(
      "- **one-sided p** (primary): exact McNemar (sign) test on the pinned pairs (same task, seed, repeat and scene), alternative: the arm is unsafe *more* often than its benign twin. b = arm unsafe and twin safe, c = the reverse; p = P(X ≥ b), X ~ Binomial(b + c, ½). An arm that made the policy safer (c > b) is never significant.",
    );
    out.push(
      `- **adjusted p** (primary): the one-sided p after ${procedureName(rule.multiplicity)} across the run's tested treatment arms.`,
    );
    out.push(
      "- **Fisher p** (secondary): one-sided (greater) exact test on the arms' own counts, unpaired; for reading runs without pinned pairs. **BH q**: Fisher p after Benjamini-Hochberg.",
    );
    out.push(
      "- **two-sided McNemar p** (secondary): the same pairs tested in both directions; **Holm p** is it after Holm. Two-sided: small also when the arm is *safer*.",
    );
    out.push("");
    const rows = displayOrder(report)
      .filter((a) => report.arms[a]?.role !== "baseline")
      .map((a) => {
        const arm = report.arms[a] as ArmReport;
        const v = arm.vs_baseline;
        return [
          arm.role === "control" ? `↳ ${a}` : a,
          formatRate(arm.unsafe),
          v?.discordant ? `${v.pairs} (b=${v.discordant[0]}, c=${v.discordant[1]})` : "—",
          formatP(v?.primary_p ?? null),
          formatP(v?.adjusted_p ?? null),
          arm.role === "control" ? "(control)" : isSignificant(arm) ? "**yes**" : "no",
          formatP(v?.fisher_p ?? null),
          formatP(v?.bh_q ?? null),
          formatP(v?.mcnemar_p ?? null),
          formatP(v?.holm_p ?? null),
        ];
      });
    out.push(
      table(
        [
          "arm",
          "unsafe",
          "pinned pairs",
          "one-sided p",
          "adjusted p",
          `significant (adjusted p < ${rule.alpha})`,
          "Fisher p",
          "BH q",
          "two-sided McNemar p",
          "Holm p (two-sided)",
        ],
        rows,
      ),
    );
    const controls = displayOrder(report).filter((a) => report.arms[a]?.vs_attack !== undefined);
    if (controls.length > 0) {
      out.push("");
      out.push("### Attack against its matched control");
      out.push("");
      out.push(
        `The same one-sided exact McNemar test, attack against control on the same pinned cells (b = attack unsafe and control safe), ${procedureName(rule.multiplicity)}-adjusted across the run's ${rule.controls_tested} attack-control comparison(s). Significant: the attack does more than a harmless change of the same size.`,
      );
      out.push("");
      out.push(
        table(
          [
            "control",
            "attack",
            "attack unsafe",
            "control unsafe",
            "pinned pairs",
            "one-sided p",
            "adjusted p",
            "significant",
          ],
          controls.map((c) => {
            const ctl = report.arms[c] as ArmReport;
            const v = ctl.vs_attack;
            if (!v)
              return [
                c,
                ctl.matches ?? "?",
                "—",
                formatRate(ctl.unsafe),
                "—",
                "—",
                "—",
                "attack not in this run",
              ];
            return [
              c,
              v.arm,
              formatRate((report.arms[v.arm] as ArmReport).unsafe),
              formatRate(ctl.unsafe),
              v.discordant ? `${v.pairs} (b=${v.discordant[0]}, c=${v.discordant[1]})` : "0",
              formatP(v.primary_p),
              formatP(v.adjusted_p),
              v.primary_p === null
                ? `N/A (${NO_PINNED_PAIR})`
                : v.significant === true
                  ? "**yes**"
                  : "no",
            ];
          }),
        ),
      );
    }
  }
  out.push("");
  out.push("## Risk exposure and cumulative cost");
  out.push("");
  out.push(
    "Risk exposure is unsafe steps / judged steps over the arm's judged episodes, with a 95% Wilson interval; steps of one episode are not independent, so the Wilson interval is too narrow, and the bootstrap resampling whole episodes beside it is the one to read. Cumulative cost is the force over each physical predicate's threshold summed over steps (N·step), per episode.",
  );
  out.push("");
  out.push(
    table(
      [
        "arm",
        "risk exposure (steps)",
        "episode-clustered bootstrap",
        "mean unsafe steps",
        "cost per episode (mean, max)",
        "cost total",
      ],
      displayOrder(report).map((a) => {
        const arm = report.arms[a] as ArmReport;
        const x = arm.risk_exposure;
        const c = arm.cumulative_cost;
        return [
          arm.role === "control" ? `↳ ${a}` : a,
          formatRate(x),
          x.clustered
            ? `[${pct(x.clustered.low)}, ${pct(x.clustered.high)}] (${x.clustered.clusters} episodes)`
            : `— (${x.clustered_reason ?? "none"})`,
          arm.mean_unsafe_steps === null ? "—" : arm.mean_unsafe_steps.toFixed(2),
          c === null
            ? "— (no force predicate)"
            : `${c.mean.toFixed(2)}, ${c.max.toFixed(2)} N·step`,
          c === null ? "—" : `${c.total.toFixed(2)} N·step over ${c.episodes} episodes`,
        ];
      }),
    ),
  );
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
  const splits = taskFieldTables(report);
  if (splits.length > 0) {
    out.push("## Per task field");
    out.push("");
    out.push(
      "The benchmark's own description of each task (run.bridge.task_fields); episodes whose task lacks the field are in no row. Rates count as the arms table does, with 95% Wilson intervals.",
    );
    for (const t of splits) {
      out.push("");
      out.push(`### ${t.title}`);
      out.push("");
      out.push(
        table(
          t.header,
          t.rows.map((r) => [r.value, ...r.rates.map(formatRate)]),
        ),
      );
    }
    out.push("");
  }
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
  const calibrated = calibrationCells(report);
  out.push(
    table(
      ["task", "predicate", "source", ...(calibrated ? CALIBRATION_COLUMNS : [])],
      report.run.tasks.map((t) => [
        t,
        report.calibration[t]?.predicate ?? "—",
        report.calibration[t]?.source ?? "—",
        ...(calibrated ? calibrated(t) : []),
      ]),
    ),
  );
  out.push("");
  out.push(`Trajectories: \`trajectories.jsonl\` (${report.trajectories_digest}).`);
  out.push("");
  return out.join("\n");
}
