/**
 * The compliance map: which requirements of the EU AI Act, ISO 10218-1/-2:2025, NIST AI 100-2,
 * the NIST AI RMF and IEC 62443 a run produces evidence for, and where the evidence has gaps.
 * Requirements are described in our own words. Evidence, not certification: a present signal
 * says the run measured something relevant, never that a requirement is met.
 */

import type { ArmReport, Report } from "./build.js";
import { formatRate } from "./format.js";
import { eaiRisk } from "./sarif-rules.js";
import { ruleText } from "./significance.js";

export const COMPLIANCE_SCHEMA = "provael.compliance/1";
export const COMPLIANCE_DISCLAIMER =
  "Evidence, not certification: this map lists what a simulated red-team run measured and where it falls short. It does not establish conformity with any regulation or standard; that is for the provider, the integrator and, where required, a notified body.";

export type SignalId =
  | "calibrated-predicate"
  | "baseline-floor"
  | "clean-task-success"
  | "controls"
  | "intervals"
  | "significance"
  | "eai-coverage"
  | "delivery-checks"
  | "sample-size"
  | "complete-judgement"
  | "threat-model"
  | "report-digest"
  | "policy-digest"
  | "manifest"
  | "attestation"
  | "verdict"
  | "covers-evasion"
  | "covers-direct-prompt-injection"
  | "covers-indirect-prompt-injection"
  | "covers-poisoning"
  | "covers-privacy";

export interface Signal {
  present: boolean;
  /** What was found, or why it is missing. */
  detail: string;
}

export type RequirementStatus = "evidence-present" | "gap";

export interface Requirement {
  id: string;
  framework: string;
  reference: string;
  title: string;
  /** What the requirement asks, paraphrased. */
  summary: string;
  /** How this run's signals bear on it. */
  evidence: SignalId[];
  status: RequirementStatus;
  /** Why it is a gap (one per missing signal); empty when evidence is present. */
  gaps: string[];
}

export interface ComplianceMap {
  schema: typeof COMPLIANCE_SCHEMA;
  disclaimer: string;
  report: {
    digest: string | null;
    policy: string;
    suite: string;
    protocol: string;
    tool_version: string;
  };
  signals: Record<SignalId, Signal>;
  requirements: Requirement[];
  summary: { evidence_present: number; gap: number };
}

/** What the map needs beyond report.json: facts about the run directory. */
export interface ComplianceContext {
  /** SHA-256 of report.json's bytes, `sha256:<hex>`. */
  reportDigest?: string | null;
  /** Whether execution-manifest.json is present, and the verdict it records. */
  manifest?: { present: boolean; verdict: unknown };
  /** Whether an attestation of this exact report was found, and how. */
  attestation?: { present: boolean; detail: string };
}

interface RequirementDef {
  id: string;
  framework: string;
  reference: string;
  title: string;
  summary: string;
  evidence: SignalId[];
}

const EU = "EU AI Act (Regulation (EU) 2024/1689)";
const ISO = "ISO 10218:2025";
const N100 = "NIST AI 100-2 (adversarial machine learning taxonomy)";
const RMF = "NIST AI RMF 1.0";
const IEC = "IEC 62443";

export const REQUIREMENTS: readonly RequirementDef[] = [
  {
    id: "eu-ai-act-art9",
    framework: EU,
    reference: "Article 9",
    title: "Risk management system",
    summary:
      "A provider of a high-risk system runs a risk management process across the system's life: it identifies the risks the system can foreseeably pose, including under misuse, estimates and evaluates them, and tests the system against metrics and thresholds fixed in advance.",
    evidence: [
      "eai-coverage",
      "baseline-floor",
      "intervals",
      "calibrated-predicate",
      "sample-size",
    ],
  },
  {
    id: "eu-ai-act-art15-accuracy",
    framework: EU,
    reference: "Article 15",
    title: "Accuracy, with declared metrics",
    summary:
      "The system performs its intended task at an appropriate, declared level of accuracy, stated with the metrics used to measure it.",
    evidence: ["clean-task-success", "intervals", "calibrated-predicate"],
  },
  {
    id: "eu-ai-act-art15-robustness",
    framework: EU,
    reference: "Article 15",
    title: "Robustness",
    summary:
      "The system behaves consistently when its inputs or environment vary, including under errors and inconsistencies it may meet in use.",
    evidence: ["controls", "baseline-floor", "intervals", "significance", "complete-judgement"],
  },
  {
    id: "eu-ai-act-art15-cybersecurity",
    framework: EU,
    reference: "Article 15",
    title: "Cybersecurity against AI-specific attacks",
    summary:
      "The system resists attempts to change its behaviour or outputs by exploiting its weaknesses, including manipulated inputs crafted to mislead the model and tampering with its data or model.",
    evidence: ["eai-coverage", "delivery-checks", "significance", "controls", "threat-model"],
  },
  {
    id: "eu-ai-act-art72",
    framework: EU,
    reference: "Article 72",
    title: "Post-market monitoring",
    summary:
      "After release the provider keeps collecting and analysing data on how the system performs, so that continued compliance can be evaluated over its lifetime.",
    evidence: ["manifest", "report-digest", "attestation"],
  },
  {
    id: "iso-10218-1-cybersecurity",
    framework: ISO,
    reference: "ISO 10218-1:2025, cybersecurity requirements",
    title: "Robot: security threats to safety functions",
    summary:
      "For the robot itself, security threats that could defeat or degrade safety-related behaviour are identified and assessed, and the measures against them are described.",
    evidence: ["eai-coverage", "baseline-floor", "delivery-checks", "calibrated-predicate"],
  },
  {
    id: "iso-10218-2-cybersecurity",
    framework: ISO,
    reference: "ISO 10218-2:2025, cybersecurity requirements",
    title: "Robot application: security threats in the cell",
    summary:
      "For the robot application or cell, the integrator assesses how security threats could lead to hazards in that application and records the assessment.",
    evidence: ["eai-coverage", "calibrated-predicate", "threat-model", "manifest"],
  },
  {
    id: "nist-ai-100-2-evasion",
    framework: N100,
    reference: "Evasion attacks",
    title: "Evasion: deployment-time inputs that mislead the model",
    summary:
      "Attacks that alter what the deployed model perceives so that it produces an output the attacker wants.",
    evidence: ["covers-evasion", "threat-model", "baseline-floor"],
  },
  {
    id: "nist-ai-100-2-direct-injection",
    framework: N100,
    reference: "Direct prompt injection",
    title: "Direct prompt injection and jailbreaks",
    summary:
      "Instructions supplied by the user that push a generative model past its intended behaviour.",
    evidence: ["covers-direct-prompt-injection", "controls", "baseline-floor"],
  },
  {
    id: "nist-ai-100-2-indirect-injection",
    framework: N100,
    reference: "Indirect prompt injection",
    title: "Indirect prompt injection",
    summary:
      "Instructions planted in content the model reads from its environment or tools rather than from its operator.",
    evidence: ["covers-indirect-prompt-injection", "controls", "baseline-floor"],
  },
  {
    id: "nist-ai-100-2-poisoning",
    framework: N100,
    reference: "Poisoning attacks",
    title: "Data and model poisoning",
    summary:
      "Attacks on training data or on the model itself that plant behaviour to be triggered later.",
    evidence: ["covers-poisoning", "policy-digest"],
  },
  {
    id: "nist-ai-100-2-privacy",
    framework: N100,
    reference: "Privacy attacks",
    title: "Privacy attacks",
    summary:
      "Attacks that extract training data or model details. Provael does not test them; listed so the gap is explicit.",
    evidence: ["covers-privacy"],
  },
  {
    id: "nist-ai-rmf-measure",
    framework: RMF,
    reference: "MEASURE function",
    title: "Measure: evaluate trustworthiness with stated uncertainty",
    summary:
      "Risks are analysed and tracked with suitable methods and metrics, including safety, security and resilience, with uncertainty stated and evaluations that others can repeat.",
    evidence: [
      "intervals",
      "baseline-floor",
      "controls",
      "significance",
      "calibrated-predicate",
      "sample-size",
      "complete-judgement",
      "report-digest",
    ],
  },
  {
    id: "nist-ai-rmf-manage",
    framework: RMF,
    reference: "MANAGE function",
    title: "Manage: act on measured risks and keep watching",
    summary:
      "Measured risks are prioritised and acted on against criteria set in advance, and the response and later monitoring are documented.",
    evidence: ["eai-coverage", "verdict", "manifest", "attestation"],
  },
  {
    id: "iec-62443-4-1-svv",
    framework: IEC,
    reference: "IEC 62443-4-1, security verification and validation testing",
    title: "Security testing of the product",
    summary:
      "The product is tested for security weaknesses, including by attacking it the way an adversary would, before release, and the results are recorded.",
    evidence: ["eai-coverage", "delivery-checks", "controls", "threat-model", "manifest"],
  },
  {
    id: "iec-62443-integrity",
    framework: IEC,
    reference: "IEC 62443-3-3 / 62443-4-2, system integrity (FR 3)",
    title: "Integrity of software and information",
    summary:
      "The integrity of the software and of the information a system relies on can be checked, so that unauthorised changes are detected.",
    evidence: ["policy-digest", "report-digest", "attestation"],
  },
];

const treatmentArms = (r: Report) =>
  r.run.arms
    .filter((a) => r.arms[a]?.role === "treatment")
    .map((a) => [a, r.arms[a] as ArmReport] as const);

/** Computes every signal from the report and the run-directory facts. */
export function complianceSignals(
  report: Report,
  ctx: ComplianceContext = {},
): Record<SignalId, Signal> {
  const treatments = treatmentArms(report);
  const controls = report.run.arms.filter((a) => report.arms[a]?.role === "control");
  const uncalibrated = report.run.tasks.filter(
    (t) => (report.calibration[t]?.source ?? "suite-default") === "suite-default",
  );
  const floorName = report.tests.baseline_arm;
  const floor = floorName === null ? null : (report.arms[floorName]?.unsafe ?? null);
  const unmatched = treatments.filter(
    ([name]) =>
      !controls.some(
        (c) => report.arms[c]?.matches === name && (report.arms[c]?.unsafe.n ?? 0) > 0,
      ),
  );
  const unmeasured = treatments.filter(([, a]) => a.unsafe.n === 0);
  const tested = treatments.filter(([, a]) => a.vs_baseline?.adjusted_p != null);
  const rule = report.summary.significance;
  const risks = [
    ...new Set(
      treatments.map(([, a]) => a.eai).filter((e): e is NonNullable<typeof e> => e !== null),
    ),
  ].sort();
  const classes = new Set(risks.flatMap((id) => eaiRisk(id).nist));
  const notDelivered = treatments.filter(([, a]) => a.not_delivered > 0);
  const errors = Object.values(report.arms).reduce((s, a) => s + a.errors, 0);
  const unjudged = Object.values(report.arms).reduce((s, a) => s + a.unjudged, 0);
  const coverage = (cls: string, label: string): Signal =>
    classes.has(cls as never)
      ? {
          present: true,
          detail: `${label} exercised by ${treatments
            .filter(([, a]) => a.eai !== null && (eaiRisk(a.eai).nist as string[]).includes(cls))
            .map(([n]) => n)
            .join(", ")}`,
        }
      : { present: false, detail: `no arm of this run exercises ${label}` };
  const manifest = ctx.manifest ?? { present: false, verdict: null };
  return {
    "calibrated-predicate":
      report.run.tasks.length > 0 && uncalibrated.length === 0
        ? {
            present: true,
            detail: `every task's predicate comes from a calibration (${report.run.tasks
              .map((t) => `${t}: ${report.calibration[t]?.source}`)
              .join("; ")})`,
          }
        : {
            present: false,
            detail: `uncalibrated run: ${uncalibrated.join(", ") || "no task"} use(s) the suite-default predicate, so the unsafe rates rest on zones that were not fitted to this policy's benign behaviour (run \`provael calibrate\`)`,
          },
    "baseline-floor":
      floor !== null && floor.n > 0
        ? { present: true, detail: `benign floor ${floorName} ${formatRate(floor)}` }
        : {
            present: false,
            detail:
              floorName === null
                ? "no baseline arm: attack rates cannot be read against the policy's benign unsafe rate (add --attacks none)"
                : `the baseline arm ${floorName} has no judged episode`,
          },
    "clean-task-success":
      report.summary.clean_task_success.n > 0
        ? {
            present: true,
            detail: `clean task success ${formatRate(report.summary.clean_task_success)}`,
          }
        : { present: false, detail: "no benign episode measured task success (no baseline arm)" },
    controls:
      treatments.length > 0 && unmatched.length === 0
        ? {
            present: true,
            detail: `every treatment arm has a matched control (${controls.join(", ")})`,
          }
        : {
            present: false,
            detail:
              treatments.length === 0
                ? "no treatment arm"
                : `treatment arm(s) without a measured matched control: ${unmatched.map(([n]) => n).join(", ")}`,
          },
    intervals:
      treatments.length > 0 && unmeasured.length === 0
        ? {
            present: true,
            detail:
              "every treatment arm's rate carries a 95% Wilson interval and an anytime-valid interval",
          }
        : {
            present: false,
            detail:
              treatments.length === 0
                ? "no treatment arm was measured"
                : `no judged episode, so no interval, for: ${unmeasured.map(([n]) => n).join(", ")}`,
          },
    significance:
      tested.length > 0
        ? {
            present: true,
            detail: `${tested.length} treatment arm(s) tested against the floor under the declared rule (${rule ? ruleText(rule) : "none"}); ${tested.filter(([, a]) => a.vs_baseline?.significant === true).length} significant`,
          }
        : {
            present: false,
            detail: "no treatment arm was tested against a baseline arm on pinned pairs",
          },
    "eai-coverage":
      risks.length > 0
        ? {
            present: true,
            detail: `risks exercised: ${risks.map((r) => `${r} ${eaiRisk(r).name}`).join(", ")}`,
          }
        : { present: false, detail: "no treatment arm tagged with an Embodied AI Security risk" },
    "delivery-checks":
      treatments.length > 0 && notDelivered.length === 0
        ? {
            present: true,
            detail:
              "every treatment episode's perturbation was verified to reach the policy or the simulator",
          }
        : {
            present: false,
            detail:
              treatments.length === 0
                ? "no treatment arm"
                : `perturbation not delivered in ${notDelivered.map(([n, a]) => `${n} (${a.not_delivered})`).join(", ")}: those arms may pass for robust without being attacked`,
          },
    "sample-size": report.summary.preliminary
      ? {
          present: false,
          detail: `preliminary run: ${report.run.seeds} seed(s), fewer than 5; read the intervals, not the point estimates`,
        }
      : {
          present: true,
          detail: `${report.run.seeds} seeds × ${report.run.repeats} repeat(s) per (task, arm)`,
        },
    "complete-judgement":
      errors === 0 && unjudged === 0
        ? { present: true, detail: "no episode errored or went unjudged" }
        : {
            present: false,
            detail: `${errors} episode error(s) and ${unjudged} unjudged episode(s) are excluded from the rates`,
          },
    "threat-model":
      treatments.length > 0
        ? {
            present: true,
            detail: `attacker access recorded per arm (${[...new Set(treatments.map(([, a]) => a.access))].join(", ")})`,
          }
        : { present: false, detail: "no treatment arm, so no threat model was exercised" },
    "report-digest": {
      present: true,
      detail: `report.json is canonical JSON${ctx.reportDigest ? ` with digest ${ctx.reportDigest}` : ""}; trajectories ${report.trajectories_digest}`,
    },
    "policy-digest":
      report.run.policy_digest !== null
        ? { present: true, detail: `policy pinned by ${report.run.policy_digest}` }
        : {
            present: false,
            detail: "the report records no digest of the policy under test (weights or model file)",
          },
    manifest: manifest.present
      ? {
          present: true,
          detail: "execution-manifest.json records the machine, the time and the command line",
        }
      : { present: false, detail: "no execution-manifest.json beside report.json" },
    attestation: ctx.attestation ?? {
      present: false,
      detail: "no signed attestation of this report (run `provael attest`)",
    },
    verdict:
      manifest.verdict !== null && manifest.verdict !== undefined
        ? { present: true, detail: "the execution manifest records an acceptance verdict" }
        : {
            present: false,
            detail: "no acceptance verdict: no criteria were fixed in advance for this run",
          },
    "covers-evasion": coverage("evasion", "evasion"),
    "covers-direct-prompt-injection": coverage(
      "direct-prompt-injection",
      "direct prompt injection",
    ),
    "covers-indirect-prompt-injection": coverage(
      "indirect-prompt-injection",
      "indirect prompt injection",
    ),
    "covers-poisoning": coverage("poisoning", "poisoning"),
    "covers-privacy": { present: false, detail: "privacy attacks are outside Provael's scope" },
  };
}

/** Builds the compliance map of a report. */
export function buildCompliance(report: Report, ctx: ComplianceContext = {}): ComplianceMap {
  const signals = complianceSignals(report, ctx);
  const requirements: Requirement[] = REQUIREMENTS.map((def) => {
    const gaps = def.evidence
      .filter((s) => !signals[s].present)
      .map((s) => `${s}: ${signals[s].detail}`);
    return {
      ...def,
      evidence: [...def.evidence],
      status: gaps.length === 0 ? "evidence-present" : "gap",
      gaps,
    };
  });
  return {
    schema: COMPLIANCE_SCHEMA,
    disclaimer: COMPLIANCE_DISCLAIMER,
    report: {
      digest: ctx.reportDigest ?? null,
      policy: report.run.policy,
      suite: report.run.suite,
      protocol: report.protocol,
      tool_version: report.tool_version,
    },
    signals,
    requirements,
    summary: {
      evidence_present: requirements.filter((r) => r.status === "evidence-present").length,
      gap: requirements.filter((r) => r.status === "gap").length,
    },
  };
}

const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** The map as Markdown, for auditors. */
export function renderComplianceMarkdown(map: ComplianceMap): string {
  const out: string[] = [
    `# Compliance evidence map: ${map.report.policy} on ${map.report.suite}`,
    "",
    `> ${map.disclaimer}`,
    "",
    `Report ${map.report.digest ? `\`${map.report.digest}\`` : "(digest not given)"}, protocol \`${map.report.protocol}\`, Provael ${map.report.tool_version}. ${map.summary.evidence_present} requirement(s) with evidence present, ${map.summary.gap} with gaps.`,
    "",
  ];
  for (const framework of [...new Set(map.requirements.map((r) => r.framework))]) {
    out.push(`## ${framework}`, "");
    out.push("| requirement | what it asks (our words) | status | evidence from this run | gaps |");
    out.push("| --- | --- | --- | --- | --- |");
    for (const r of map.requirements.filter((x) => x.framework === framework)) {
      const present = r.evidence.filter((s) => map.signals[s].present);
      out.push(
        `| **${cell(r.title)}** (${cell(r.reference)}) | ${cell(r.summary)} | ${r.status === "gap" ? "**gap**" : "evidence present"} | ${present.length === 0 ? "—" : present.map((s) => `\`${s}\``).join(", ")} | ${r.gaps.length === 0 ? "—" : cell(r.gaps.join("; "))} |`,
      );
    }
    out.push("");
  }
  out.push("## Signals", "", "| signal | present | detail |", "| --- | --- | --- |");
  for (const [id, s] of Object.entries(map.signals)) {
    out.push(`| \`${id}\` | ${s.present ? "yes" : "**no**"} | ${cell(s.detail)} |`);
  }
  out.push("");
  return out.join("\n");
}
