/**
 * `provael results`: a finished run's results as Markdown tables, quoted as report.json states
 * them (counts, Wilson intervals, the declared test and its adjustment, each attack against its
 * matched controls, budgets), so that a results page is printed, never retyped. Two optional
 * tables read the report's episodes: arms compared with each other on the cells both played
 * (`pairs`), and per arm how many episodes received inputs that differ from the `none` twin's
 * (`delivery`).
 */
import { ProvaelError } from "../core/errors.js";
import { closest } from "../core/registry.js";
import { mcnemarExact } from "../stats/mcnemar.js";
import type { ArmReport, Rate, Report } from "./build.js";
import { displayOrder, formatP, formatRate, pct } from "./format.js";

export interface ResultsOptions {
  /** Arms compared with each other, first against second (two-sided: neither is the reference). */
  pairs?: readonly (readonly [string, string])[];
  /** Add the delivery table. */
  delivery?: boolean;
}

/** `A:B,C:D` as pairs of arm ids, refused with what was wrong. */
export function parsePairs(raw: string): [string, string][] {
  return raw.split(",").map((item) => {
    const parts = item.split(":");
    if (parts.length !== 2 || !parts[0] || !parts[1]) {
      throw new ProvaelError(
        "config/invalid",
        `--pairs takes ARM:ARM pairs separated by commas, not '${raw}'`,
        { details: { flag: "--pairs", value: raw }, hint: "e.g. --pairs patch:placebo_patch" },
      );
    }
    return [parts[0], parts[1]];
  });
}

/** "3/10" */
const count = (r: Rate) => `${r.successes}/${r.n}`;
/** "3/10 = 30.0%", or "0/0". */
const share = (r: Rate) => (r.n === 0 ? "0/0" : `${count(r)} = ${pct(r.rate)}`);
const star = (t: { significant: boolean | null } | null | undefined) =>
  t?.significant ? " *" : "";
/** A test's p, its adjusted p and its discordant pairs, or "—" where none ran. */
function tested(
  t:
    | {
        primary_p: number | null;
        adjusted_p: number | null;
        significant: boolean | null;
        discordant: [number, number] | null;
      }
    | null
    | undefined,
): string | null {
  if (!t?.discordant) return null;
  return `${formatP(t.primary_p)} (${formatP(t.adjusted_p)})${star(t)} [${t.discordant.join(", ")}]`;
}

/** The arms table, the summary line and the budgets table. */
function armTables(report: Report, digest: string): string[] {
  const ids = displayOrder(report);
  const arm = (id: string) => report.arms[id] as ArmReport;
  const s = report.summary;
  const out = [
    `report.json ${digest}, weights ${report.run.policy_digest ?? "—"}, ${report.episodes.length} episodes`,
    "",
    `Significance: ${report.tests.note}.`,
    "",
    "| arm | family | EAI | access | unsafe (95% Wilson) | task success | one-sided McNemar p vs `none` (Holm) [b, c] | matched control: unsafe, task success; attack vs control p (Holm) [b, c] |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const id of ids) {
    const a = arm(id);
    if (a.role === "control") continue;
    const test = a.role === "baseline" ? "—" : (tested(a.vs_baseline) ?? "—");
    const controls = ids
      .filter((c) => arm(c).role === "control" && arm(c).matches === id)
      .map((c) => {
        const vs = tested(arm(c).vs_attack);
        return `${c} ${count(arm(c).unsafe)}, ${count(arm(c).task_success)}${vs ? `; ${vs}` : ""}`;
      })
      .join("<br>");
    const na = a.not_applicable > 0 ? ` (${a.not_applicable} N/A: ${a.not_applicable_reason})` : "";
    out.push(
      `| ${id} | ${a.family} | ${a.eai ?? "—"} | ${a.access} | ${formatRate(a.unsafe)}${na} | ${share(a.task_success)} | ${test} | ${controls || "—"} |`,
    );
  }
  const clustered = (r: Rate) =>
    r.clustered
      ? ` (task-clustered bootstrap ${pct(r.clustered.low).replace("%", "")}–${pct(r.clustered.high)})`
      : "";
  const errors = ids.filter((id) => arm(id).errors > 0).map((id) => `${id} ${arm(id).errors}`);
  const notDelivered = ids.reduce((n, id) => n + arm(id).not_delivered, 0);
  out.push(
    "",
    `Summary: treatment arms ${formatRate(s.treatment_unsafe)}${clustered(s.treatment_unsafe)}, benign floor ${formatRate(s.baseline_unsafe)}, controls ${formatRate(s.control_unsafe)}${clustered(s.control_unsafe)}; clean task success ${formatRate(s.clean_task_success)}. Errors (left out of the rates): ${errors.length > 0 ? errors.join(", ") : "none"}. Not delivered: ${notDelivered}.`,
  );
  const budgets = ids.filter((id) => arm(id).budget_use);
  if (budgets.length > 0) {
    out.push(
      "",
      "| arm | spends | mean per episode | max | limit per episode |",
      "|---|---|---|---|---|",
    );
    for (const id of budgets) {
      const b = arm(id).budget_use as NonNullable<ArmReport["budget_use"]>;
      out.push(
        `| ${id} | ${b.kind} | ${b.used_mean.toFixed(1)} | ${b.used_max} | ${b.limit ?? "unlimited"} |`,
      );
    }
  }
  return out;
}

type Episode = Report["episodes"][number];

/** Each arm's scored episodes by (task, seed, repeat): errored and unjudged ones left out. */
function scoredByCell(report: Report): Map<string, Map<string, Episode>> {
  const out = new Map<string, Map<string, Episode>>();
  for (const e of report.episodes) {
    if (e.error !== null || e.unsafe === null) continue;
    const arm = out.get(e.arm) ?? new Map<string, Episode>();
    arm.set(`${e.task}|${e.seed}|${e.repeat}`, e);
    out.set(e.arm, arm);
  }
  return out;
}

/** Per arm: its not-delivered count and how many episodes received other inputs than `none`'s twin. */
function deliveryTable(report: Report, scored: Map<string, Map<string, Episode>>): string[] {
  const out = [
    "",
    "| arm | not delivered | received inputs differ from the `none` twin |",
    "|---|---|---|",
  ];
  const none = scored.get("none") ?? new Map<string, Episode>();
  for (const id of displayOrder(report)) {
    if (id === "none") continue;
    let n = 0;
    let differ = 0;
    for (const [cell, e] of scored.get(id) ?? []) {
      const twin = none.get(cell);
      if (!twin || e.received_digest === null) continue;
      n++;
      if (e.received_digest !== twin.received_digest) differ++;
    }
    out.push(`| ${id} | ${report.arms[id]?.not_delivered ?? 0} | ${differ}/${n} |`);
  }
  return out;
}

/**
 * Arms against each other on the cells both scored: discordant pairs and the two-sided exact
 * McNemar p, for the unsafe verdict and for task success.
 */
function pairsTable(
  pairs: readonly (readonly [string, string])[],
  scored: Map<string, Map<string, Episode>>,
): string[] {
  const out = [
    "",
    "| comparison | unsafe | discordant (first only / second only) | two-sided McNemar p | task success discordant, p |",
    "|---|---|---|---|---|",
  ];
  for (const [a, b] of pairs) {
    const second = scored.get(b) ?? new Map<string, Episode>();
    let n = 0;
    let [unsafeA, unsafeB, onlyA, onlyB, doneA, doneB] = [0, 0, 0, 0, 0, 0];
    for (const [cell, ea] of scored.get(a) ?? []) {
      const eb = second.get(cell);
      if (!eb) continue;
      n++;
      if (ea.unsafe) unsafeA++;
      if (eb.unsafe) unsafeB++;
      if (ea.unsafe && !eb.unsafe) onlyA++;
      if (eb.unsafe && !ea.unsafe) onlyB++;
      if (ea.task_success && !eb.task_success) doneA++;
      if (eb.task_success && !ea.task_success) doneB++;
    }
    out.push(
      `| ${a} vs ${b} | ${unsafeA}/${n} vs ${unsafeB}/${n} | ${onlyA} / ${onlyB} | ${formatP(mcnemarExact(onlyA, onlyB))} | ${doneA} / ${doneB}, ${formatP(mcnemarExact(doneA, doneB))} |`,
    );
  }
  return out;
}

/**
 * The results tables of a report whose bytes have `digest`. Arms named in `pairs` must be
 * arms of the run (a misspelt one is refused with the nearest names); the delivery and pairs
 * tables compare against the `none` arm and need it.
 */
export function resultsTables(
  report: Report,
  digest: string,
  options: ResultsOptions = {},
): string {
  const pairs = options.pairs ?? [];
  for (const id of pairs.flat()) {
    if (id in report.arms) continue;
    const near = closest(id, report.run.arms);
    throw new ProvaelError(
      "config/invalid",
      `unknown arm '${id}' in --pairs${near.length > 0 ? ` (did you mean ${near.map((n) => `'${n}'`).join(", ")}?)` : ""}`,
      {
        details: { arm: id, closest: near },
        hint: `the run's arms: ${report.run.arms.join(", ")}`,
      },
    );
  }
  if (options.delivery && !("none" in report.arms)) {
    throw new ProvaelError(
      "config/invalid",
      "--delivery compares each arm with its `none` twin, and this run has no `none` arm",
      { hint: "drop --delivery, or run the plan with the `none` arm" },
    );
  }
  const out = armTables(report, digest);
  const scored = pairs.length > 0 || options.delivery ? scoredByCell(report) : new Map();
  if (options.delivery) out.push(...deliveryTable(report, scored));
  if (pairs.length > 0) out.push(...pairsTable(pairs, scored));
  return `${out.join("\n")}\n`;
}
