/**
 * What report.json's numbers must say about each other, checked by the one report reader
 * (`parseReport`) after its schema: a report whose counts contradict one another (99 successes
 * out of 15, an interval whose low end is above its high end, arm counts that are not what its
 * own episodes give, a summary that is not the sum of its arms) is refused by every command
 * that reads it, and `provael view` shows it as broken, naming the field.
 *
 * The checks recompute from `episodes[]` only what the report's builder (src/report/build.ts)
 * derives from them by counting, with the same episode classes, declared here once.
 */
import type { ReportFile } from "./schema/index.js";

export interface ReportIssue {
  /** Dotted path of the field that contradicts the others. */
  path: string;
  message: string;
}

type Episode = ReportFile["episodes"][number];
type Arm = ReportFile["arms"][string];
type Rate = Arm["unsafe"];

/** Counted: played to an outcome (no error, the attack applied). */
export const isCounted = (e: { error: unknown; termination: string }): boolean =>
  e.error === null && e.termination !== "not_applicable";
/** Scored: counted and delivered (a perturbation that never reached the policy is apart). */
export const isScored = (e: {
  error: unknown;
  termination: string;
  delivered: boolean | null;
}): boolean => isCounted(e) && e.delivered !== false;
/** Judged: scored, and the judges gave a verdict. */
export const isJudged = (e: {
  error: unknown;
  termination: string;
  delivered: boolean | null;
  unsafe: boolean | null;
}): boolean => isScored(e) && e.unsafe !== null;

/**
 * A task-dict field's value as a key of `by_task_field` (LIBERO-Plus's `difficulty_level` 2 →
 * "2"); undefined when the episode's task dict lacks it or holds no scalar there.
 */
export const taskFieldValue = (
  e: { bridge?: { task: Record<string, unknown> } },
  field: string,
): string | undefined => {
  const v = e.bridge?.task[field];
  return typeof v === "string" ||
    typeof v === "boolean" ||
    (typeof v === "number" && Number.isFinite(v))
    ? String(v)
    : undefined;
};

/** Rounding slack for a stored ratio against the ratio of its counts. */
const EPS = 1e-9;

/** The issues of `report`, in the order they are found (the first one is shown first). */
export function consistencyIssues(report: ReportFile): ReportIssue[] {
  const out: ReportIssue[] = [];
  const add = (path: string, message: string) => out.push({ path, message });

  // Every rate says the same thing three ways: counts, ratio, interval.
  for (const [path, r] of rates(report)) rateIssues(path, r, add);

  // The arms, by_task tables and summary of each group of episodes: all of them, or in a
  // --compare-defenses run the undefended ones (top level) and the defended ones (`defended`).
  const groups: [string, Pick<ReportFile, "arms" | "summary" | "by_task">, Episode[]][] =
    report.defended
      ? [
          ["", report, report.episodes.filter((e) => !e.defenses)],
          ["defended.", report.defended, report.episodes.filter((e) => e.defenses)],
        ]
      : [["", report, report.episodes]];
  for (const [prefix, group, episodes] of groups) {
    const byArm = new Map<string, Episode[]>();
    for (const e of episodes) byArm.set(e.arm, [...(byArm.get(e.arm) ?? []), e]);
    for (const [name, arm] of Object.entries(group.arms))
      armIssues(`${prefix}arms.${name}`, arm, byArm.get(name) ?? [], add);
    byTaskIssues(`${prefix}by_task`, group.by_task, episodes, add);
    summaryIssues(`${prefix}summary`, group, add);
  }

  // The split by task field covers the top-level group's episodes (the undefended ones).
  taskFieldIssues(report, groups[0]?.[2] ?? [], add);

  tallyIssues(
    "termination_counts",
    report.termination_counts,
    report.episodes.map((e) => e.termination),
    add,
  );
  tallyIssues(
    "error_counts",
    report.error_counts,
    report.episodes.flatMap((e) => (e.error ? [e.error.code] : [])),
    add,
  );
  return out;
}

type Add = (path: string, message: string) => void;

/** Every RATE object of a report, with its path. */
function rates(report: ReportFile): [string, Rate][] {
  const out: [string, Rate][] = [];
  const ofArm = (prefix: string, arm: Arm) => {
    for (const k of [
      "unsafe",
      "task_success",
      "succ_but_unsafe",
      "risk_exposure",
      "stopped",
    ] as const) {
      const r = arm[k];
      if (r) out.push([`${prefix}.${k}`, r]);
    }
  };
  const ofGroup = (prefix: string, g: Pick<ReportFile, "arms" | "summary" | "by_task">) => {
    for (const [name, arm] of Object.entries(g.arms)) ofArm(`${prefix}arms.${name}`, arm);
    for (const [k, v] of Object.entries(g.summary))
      if (v && typeof v === "object" && "successes" in v)
        out.push([`${prefix}summary.${k}`, v as Rate]);
    for (const [t, byArm] of Object.entries(g.by_task))
      for (const [a, r] of Object.entries(byArm)) out.push([`${prefix}by_task.${t}.${a}`, r]);
  };
  ofGroup("", report);
  for (const [f, byValue] of Object.entries(report.by_task_field ?? {}))
    for (const [v, byArm] of Object.entries(byValue))
      for (const [a, r] of Object.entries(byArm)) {
        out.push([`by_task_field.${f}.${v}.${a}.unsafe`, r.unsafe]);
        out.push([`by_task_field.${f}.${v}.${a}.task_success`, r.task_success]);
      }
  if (report.defended) ofGroup("defended.", report.defended);
  const m = report.mitigation;
  if (m) {
    for (const [name, arm] of Object.entries(m.arms))
      for (const k of [
        "undefended_unsafe",
        "defended_unsafe",
        "stopped",
        "undefended_task_success",
        "defended_task_success",
      ] as const)
        out.push([`mitigation.arms.${name}.${k}`, arm[k]]);
    if (m.price) out.push(["mitigation.price.false_stop", m.price.false_stop]);
  }
  return out;
}

function rateIssues(path: string, r: Rate, add: Add): void {
  if (r.successes > r.n) {
    add(`${path}.successes`, `${r.successes} successes out of n = ${r.n}`);
    return;
  }
  if (r.n === 0) {
    if (r.rate !== null) add(`${path}.rate`, `is ${r.rate} with n = 0 (no estimate: null)`);
    if (r.interval !== null) add(`${path}.interval`, "is set with n = 0 (no estimate: null)");
    if (r.anytime) add(`${path}.anytime`, "is set with n = 0 (no estimate: null)");
    return;
  }
  const p = r.successes / r.n;
  if (r.rate === null || Math.abs(r.rate - p) > EPS) {
    add(`${path}.rate`, `is ${r.rate}, but successes / n = ${r.successes} / ${r.n} = ${p}`);
    return;
  }
  const ordered = (what: string, x: { low: number; high: number }, contains: boolean) => {
    if (!(x.low <= x.high)) add(`${path}.${what}`, `low ${x.low} is above high ${x.high}`);
    else if (x.low < -EPS || x.high > 1 + EPS)
      add(`${path}.${what}`, `[${x.low}, ${x.high}] is not within [0, 1]`);
    else if (contains && (p < x.low - EPS || p > x.high + EPS))
      add(`${path}.${what}`, `[${x.low}, ${x.high}] does not contain the rate ${p}`);
  };
  if (r.interval === null) add(`${path}.interval`, `is null with n = ${r.n}`);
  // A Wilson interval always contains the observed rate; the others need only be ordered.
  else ordered("interval", r.interval, true);
  if (r.anytime) ordered("anytime", r.anytime, false);
  if (r.clustered) ordered("clustered", r.clustered, false);
}

/** What an arm counts, recounted from its episodes. */
function armIssues(path: string, arm: Arm, eps: Episode[], add: Add): void {
  const counted = eps.filter(isCounted);
  const scored = eps.filter(isScored);
  const judged = scored.filter((e) => e.unsafe !== null);
  const expect = (field: string, stored: number | undefined, actual: number) => {
    if (stored !== undefined && stored !== actual)
      add(`${path}.${field}`, `is ${stored}, but the arm's episodes give ${actual}`);
  };
  expect("episodes", arm.episodes, eps.length);
  if (arm.scenes !== undefined)
    expect("scenes", arm.scenes, new Set(counted.map((e) => `${e.task}|${e.scene}`)).size);
  expect(
    "not_applicable",
    arm.not_applicable,
    eps.filter((e) => e.termination === "not_applicable").length,
  );
  expect("errors", arm.errors, eps.filter((e) => e.error !== null).length);
  expect("unjudged", arm.unjudged, scored.length - judged.length);
  expect(
    "not_delivered",
    arm.not_delivered,
    arm.role === "baseline" ? 0 : counted.filter((e) => e.delivered === false).length,
  );
  const counts = (field: string, r: Rate | undefined, successes: number, n: number) => {
    if (!r) return;
    expect(`${field}.n`, r.n, n);
    expect(`${field}.successes`, r.successes, successes);
  };
  counts("unsafe", arm.unsafe, judged.filter((e) => e.unsafe === true).length, judged.length);
  counts(
    "task_success",
    arm.task_success,
    scored.filter((e) => e.task_success === true).length,
    scored.length,
  );
  counts(
    "succ_but_unsafe",
    arm.succ_but_unsafe,
    judged.filter((e) => e.unsafe === true && e.task_success === true).length,
    judged.length,
  );
  counts(
    "risk_exposure",
    arm.risk_exposure,
    judged.reduce((s, e) => s + e.unsafe_steps, 0),
    judged.reduce((s, e) => s + e.judged_steps, 0),
  );
  counts("stopped", arm.stopped, scored.filter((e) => e.stop != null).length, scored.length);
  for (const [field, test] of [
    ["vs_baseline", arm.vs_baseline],
    ["vs_attack", arm.vs_attack],
  ] as const) {
    if (!test) continue;
    if (test.pairs > judged.length)
      add(
        `${path}.${field}.pairs`,
        `${test.pairs} pairs, but the arm has ${judged.length} judged episodes`,
      );
    else if (test.discordant && test.discordant[0] + test.discordant[1] > test.pairs)
      add(
        `${path}.${field}.discordant`,
        `${test.discordant[0]} + ${test.discordant[1]} discordant pairs out of ${test.pairs} pairs`,
      );
  }
}

/**
 * Each by_task_field entry counts the episodes of its arm whose task dict holds that value of the
 * field, as the arms' own rates count (judged for unsafe, scored for task success), and the
 * split names only the fields run.bridge.task_fields names.
 */
function taskFieldIssues(report: ReportFile, eps: Episode[], add: Add): void {
  const split = report.by_task_field;
  if (split === undefined) return;
  const fields = report.run.bridge?.task_fields ?? [];
  for (const [f, byValue] of Object.entries(split)) {
    if (!fields.includes(f)) {
      add(`by_task_field.${f}`, `is not a field run.bridge.task_fields names`);
      continue;
    }
    for (const [v, byArm] of Object.entries(byValue))
      for (const [a, r] of Object.entries(byArm)) {
        const of = eps.filter((e) => e.arm === a && taskFieldValue(e, f) === v);
        const judged = of.filter(isJudged);
        const scored = of.filter(isScored);
        const want: [string, Rate, number, number][] = [
          ["unsafe", r.unsafe, judged.filter((e) => e.unsafe === true).length, judged.length],
          [
            "task_success",
            r.task_success,
            scored.filter((e) => e.task_success === true).length,
            scored.length,
          ],
        ];
        for (const [k, got, s, n] of want)
          if (got.successes !== s || got.n !== n)
            add(
              `by_task_field.${f}.${v}.${a}.${k}`,
              `says ${got.successes} / ${got.n}, but the episodes of arm '${a}' with ${f} ${v} give ${s} / ${n}`,
            );
      }
  }
}

/** Each by_task entry is the unsafe rate of its task and arm's episodes. */
function byTaskIssues(path: string, byTask: ReportFile["by_task"], eps: Episode[], add: Add): void {
  const judged = new Map<string, { s: number; n: number }>();
  for (const e of eps) {
    if (!isJudged(e)) continue;
    const key = `${e.task}\u0000${e.arm}`;
    const c = judged.get(key) ?? { s: 0, n: 0 };
    c.n += 1;
    if (e.unsafe === true) c.s += 1;
    judged.set(key, c);
  }
  for (const [key, c] of judged) {
    const [t, a] = key.split("\u0000") as [string, string];
    if (!byTask[t]?.[a])
      add(`${path}.${t}.${a}`, `is missing, but ${c.n} judged episodes have this task and arm`);
  }
  for (const [t, byArm] of Object.entries(byTask))
    for (const [a, r] of Object.entries(byArm)) {
      const c = judged.get(`${t}\u0000${a}`) ?? { s: 0, n: 0 };
      if (r.n !== c.n || r.successes !== c.s)
        add(
          `${path}.${t}.${a}`,
          `says ${r.successes} / ${r.n}, but the episodes of task '${t}' and arm '${a}' give ${c.s} / ${c.n}`,
        );
    }
}

/** The summary pools its arms by role: its counts are their sums. */
function summaryIssues(path: string, group: Pick<ReportFile, "arms" | "summary">, add: Add): void {
  const arms = Object.values(group.arms);
  const sum = (pick: (a: Arm) => Rate, keep: (a: Arm) => boolean) =>
    arms
      .filter(keep)
      .reduce((t, a) => ({ s: t.s + pick(a).successes, n: t.n + pick(a).n }), { s: 0, n: 0 });
  const role = (r: string) => (a: Arm) => a.role === r;
  const all = () => true;
  const expected: [keyof ReportFile["summary"], { s: number; n: number }][] = [
    ["treatment_unsafe", sum((a) => a.unsafe, role("treatment"))],
    ["baseline_unsafe", sum((a) => a.unsafe, role("baseline"))],
    ["control_unsafe", sum((a) => a.unsafe, role("control"))],
    ["all_unsafe", sum((a) => a.unsafe, all)],
    ["clean_task_success", sum((a) => a.task_success, role("baseline"))],
    ["succ_but_unsafe", sum((a) => a.succ_but_unsafe, role("treatment"))],
  ];
  for (const [field, c] of expected) {
    const r = group.summary[field] as Rate;
    if (r.n !== c.n || r.successes !== c.s)
      add(`${path}.${field}`, `says ${r.successes} / ${r.n}, but its arms sum to ${c.s} / ${c.n}`);
  }
}

/** A table of counts by value is the tally of those values. */
function tallyIssues(
  path: string,
  stored: Record<string, number>,
  values: string[],
  add: Add,
): void {
  const tally = new Map<string, number>();
  for (const v of values) tally.set(v, (tally.get(v) ?? 0) + 1);
  for (const k of new Set([...Object.keys(stored), ...tally.keys()])) {
    const s = stored[k] ?? 0;
    const t = tally.get(k) ?? 0;
    if (s !== t) add(`${path}.${k}`, `is ${s}, but ${t} episodes have it`);
  }
}
