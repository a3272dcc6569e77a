/**
 * `provael compare`: two sweeps of the same plan (two weights, two releases) side by side. A
 * sweep is kept as a small summary (docs/sweeps/*.json) because a full sweep's journal is about
 * 600 MB and its report about 7 MB; the summary keeps what the comparison needs: per arm its
 * counts and verdict under the declared rule and, when made from a report, one character per
 * cell so that the next sweep can be compared pair by pair.
 *
 * Cell characters, in `cell_order` (the run's tasks in its order, each with its seeds, each seed
 * with its repeats): `U` unsafe and task done, `u` unsafe, `s` safe and task done, `.` safe and
 * not done, `e` an error, `n` not applicable, `-` not played.
 *
 * An arm has **moved** by the rule that fits what both summaries hold: with cells on both sides,
 * the two-sided exact McNemar test on the cells both played (p < 0.05, one test per row, no
 * adjustment: a description of what changed, not a claim a report makes); without them, the two
 * 95% Wilson intervals not overlapping (conservative; no test is claimed).
 */
import { z } from "zod";
import { ProvaelError } from "../core/errors.js";
import { describeIssues } from "../core/zod-issues.js";
import { mcnemarExact } from "../stats/mcnemar.js";
import { rate } from "../stats/rate.js";
import type { Report } from "./build.js";
import { displayOrder, formatP, formatRate } from "./format.js";

const countsSchema = z
  .tuple([z.number().int().min(0), z.number().int().min(0)])
  .refine(([k, n]) => k <= n, "more successes than episodes");

const sweepArmSchema = z
  .object({
    role: z.string(),
    matches: z.string().optional(),
    /** [unsafe, scored] */
    unsafe: countsSchema,
    /** [task done, scored] */
    task_success: countsSchema,
    errors: z.number().int().min(0),
    not_applicable: z.number().int().min(0),
    /** Significant against the baseline under the run's declared rule. */
    significant: z.boolean(),
    cells: z
      .string()
      .regex(/^[Uus.en-]*$/)
      .optional(),
  })
  .strict();

export const sweepSummarySchema = z
  .object({
    label: z.string().min(1),
    /** The digest of the report.json it was made from. */
    report: z.string(),
    weights: z.string().nullable().optional(),
    suite: z.string(),
    policy: z.string(),
    significance: z.string(),
    /** Where the counts came from, when not from a report on disk. */
    source: z.string().optional(),
    cell_order: z.string(),
    arms: z.record(z.string(), sweepArmSchema),
  })
  .strict();

export type SweepSummary = z.infer<typeof sweepSummarySchema>;
export type SweepArm = z.infer<typeof sweepArmSchema>;

type Episode = Report["episodes"][number];

/** One character for an episode (see the header). */
function cellChar(e: Episode): string {
  if (e.termination === "not_applicable") return "n";
  if (e.error !== null) return "e";
  if (e.unsafe) return e.task_success ? "U" : "u";
  return e.task_success ? "s" : ".";
}

/** A report (whose bytes have `digest`) as a sweep summary. */
export function sweepSummary(report: Report, digest: string, label: string): SweepSummary {
  const { run } = report;
  const order: string[] = [];
  for (const task of run.tasks)
    for (let seed = run.seed; seed < run.seed + run.seeds; seed++)
      for (let repeat = 0; repeat < run.repeats; repeat++) order.push(`${task}|${seed}|${repeat}`);
  const at = new Map(order.map((k, i) => [k, i]));
  const cells = new Map<string, string[]>();
  for (const e of report.episodes) {
    const i = at.get(`${e.task}|${e.seed}|${e.repeat}`);
    if (i === undefined) {
      throw new ProvaelError(
        "io/malformed",
        `the report holds an episode outside its plan's cells (task ${e.task}, seed ${e.seed}, repeat ${e.repeat})`,
        { details: { task: e.task, seed: e.seed, repeat: e.repeat } },
      );
    }
    const row = cells.get(e.arm) ?? Array<string>(order.length).fill("-");
    row[i] = cellChar(e);
    cells.set(e.arm, row);
  }
  const arms: Record<string, SweepArm> = {};
  for (const id of displayOrder(report)) {
    const a = report.arms[id];
    if (!a) continue;
    arms[id] = {
      role: a.role,
      ...(a.matches ? { matches: a.matches } : {}),
      unsafe: [a.unsafe.successes, a.unsafe.n],
      task_success: [a.task_success.successes, a.task_success.n],
      errors: a.errors,
      not_applicable: a.not_applicable,
      significant: a.vs_baseline?.significant ?? false,
      cells: (cells.get(id) ?? []).join(""),
    };
  }
  return {
    label,
    report: digest,
    weights: run.policy_digest ?? null,
    suite: run.suite,
    policy: run.policy,
    significance: report.tests.note,
    cell_order: `tasks ${run.tasks.join(",")} × seeds ${run.seed}-${run.seed + run.seeds - 1} × repeats ${run.repeats}`,
    arms,
  };
}

/** A summary as a file: one line per arm, read by people as well as by `compare`; diffs stay small. */
export function renderSweepSummary(summary: SweepSummary): string {
  const { arms, ...head } = summary;
  const lines = Object.entries(arms).map(
    ([id, x]) => `    ${JSON.stringify(id)}: ${JSON.stringify(x)}`,
  );
  const top = JSON.stringify(head, null, 2).slice(0, -2);
  return `${top},\n  "arms": {\n${lines.join(",\n")}\n  }\n}\n`;
}

/** A summary file's text, validated; `what` names it in errors. */
export function parseSweepSummary(text: string, what: string): SweepSummary {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new ProvaelError("io/malformed", `${what} is not JSON: ${(e as Error).message}`, {
      hint: "name a sweep summary (`provael results DIR --summary`) or a run directory",
    });
  }
  const parsed = sweepSummarySchema.safeParse(json);
  if (!parsed.success) {
    throw new ProvaelError(
      "io/malformed",
      `${what} is not a sweep summary: ${describeIssues(parsed.error)}`,
      { hint: "name a sweep summary (`provael results DIR --summary`) or a run directory" },
    );
  }
  return parsed.data;
}

const rateOf = ([k, n]: readonly [number, number]) => formatRate(rate(k, n));

/** "up", "down" or "—" by the Wilson-overlap rule; "" when either side has no scored episode. */
function apart(x: readonly [number, number], y: readonly [number, number]): string {
  if (x[1] === 0 || y[1] === 0) return "";
  const [a, b] = [rate(x[0], x[1]).interval, rate(y[0], y[1]).interval];
  if (!a || !b) return "";
  if (a.low > b.high) return "down";
  if (b.low > a.high) return "up";
  return "—";
}

/** Discordant cells (before only, after only) for a verdict read from the cell characters. */
function discordant(c1: string, c2: string, hit: (c: string) => boolean): [number, number] {
  let first = 0;
  let second = 0;
  for (let i = 0; i < Math.min(c1.length, c2.length); i++) {
    const [x, y] = [c1[i] as string, c2[i] as string];
    if ("en-".includes(x) || "en-".includes(y)) continue;
    if (hit(x) && !hit(y)) first++;
    if (hit(y) && !hit(x)) second++;
  }
  return [first, second];
}
const isUnsafe = (c: string) => c === "u" || c === "U";
const isDone = (c: string) => c === "s" || c === "U";

/** Whether a summary carries cell characters (made from a report, not retyped counts). */
const hasCells = (s: SweepSummary) => Object.values(s.arms).some((a) => a.cells);

/**
 * Two sweeps side by side as a Markdown table, each arm's change marked under the rule both
 * summaries allow, then the arms that moved and what each sweep was made from. Two sweeps with
 * cells that played different cells cannot be paired and are refused.
 */
export function compareSweeps(before: SweepSummary, after: SweepSummary): string {
  const paired = hasCells(before) && hasCells(after);
  if (paired && before.cell_order !== after.cell_order) {
    throw new ProvaelError(
      "config/incomparable",
      `the two sweeps played different cells, so they cannot be paired:\n  ${before.label}: ${before.cell_order}\n  ${after.label}: ${after.cell_order}`,
      { hint: "compare sweeps of one plan (the same tasks, seeds and repeats)" },
    );
  }
  const ids = [
    ...Object.keys(after.arms),
    ...Object.keys(before.arms).filter((id) => !(id in after.arms)),
  ];
  const [p, q] = [before.label, after.label];
  const out = [
    paired
      ? `| arm | role | unsafe, ${p} | unsafe, ${q} | ${p} only : ${q} only, p | task success, ${p} | task success, ${q} | ${p} only : ${q} only, p |`
      : `| arm | role | unsafe, ${p} | unsafe, ${q} | moved | task success, ${p} | task success, ${q} | moved |`,
    "|---|---|---|---|---|---|---|---|",
  ];
  const moved: string[] = [];
  for (const id of ids) {
    const x = before.arms[id];
    const y = after.arms[id];
    const ref = (y ?? x) as SweepArm;
    const role = ref.role === "control" ? `control (${ref.matches})` : ref.role;
    const star = (r: SweepArm) => (r.significant ? " *" : "");
    const u1 = x ? `${rateOf(x.unsafe)}${star(x)}` : "not in this sweep";
    const u2 = y ? `${rateOf(y.unsafe)}${star(y)}` : "not in this sweep";
    const t = (r: SweepArm | undefined) =>
      r && r.task_success[1] > 0 ? `${r.task_success[0]}/${r.task_success[1]}` : "";
    if (!x || !y || x.unsafe[1] === 0 || y.unsafe[1] === 0) {
      out.push(`| ${id} | ${role} | ${u1} | ${u2} |  | ${t(x)} | ${t(y)} |  |`);
      continue;
    }
    const marks: [string, string][] = [];
    for (const [what, hit, counts] of [
      ["unsafe", isUnsafe, "unsafe"],
      ["task success", isDone, "task_success"],
    ] as const) {
      let mark: string;
      let way = "";
      if (paired && x.cells && y.cells) {
        // Discordant cells and the exact p, marked up or down when p < 0.05.
        const [first, second] = discordant(x.cells, y.cells, hit);
        const pv = mcnemarExact(first, second);
        if (pv < 0.05) way = second > first ? "up" : "down";
        mark = `${first} : ${second}, ${formatP(pv)}${way ? ` ${way}` : ""}`;
      } else {
        mark = apart(x[counts], y[counts]);
        if (mark === "up" || mark === "down") way = mark;
      }
      if (way) moved.push(`${id} ${what} ${way}`);
      marks.push([what, mark]);
    }
    const [mu, mt] = marks.map(([, m]) => m);
    out.push(`| ${id} | ${role} | ${u1} | ${u2} | ${mu} | ${t(x)} | ${t(y)} | ${mt} |`);
  }
  out.push("", `Moved: ${moved.length > 0 ? moved.join("; ") : "none"}.`);
  out.push(
    "",
    `${p}: report ${before.report}, weights ${before.weights ?? "—"}; ${q}: report ${after.report}, weights ${after.weights ?? "—"}.`,
  );
  return `${out.join("\n")}\n`;
}
