/**
 * What a run was expected to cover, and what of it is missing. When a benchmark (vla-eval)
 * drives the episodes, Provael does not choose the plan: a crashed shard, an episode that
 * raised before its first step or a run stopped early leaves cells that never reached the
 * journal. Rates over the cells that did finish would then be a silently smaller n; with an
 * expectation (`--expect TASKSxEPISODES`, or the vla-eval config that drove the run) the
 * missing cells are counted and shown as incomplete instead.
 */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { ProvaelError } from "../core/errors.js";
import { describeIssues } from "../core/zod-issues.js";
import type { Report } from "./build.js";

/** Tasks × episodes of one group of tasks (one vla-eval benchmark entry, or the whole run). */
export interface ExpectedGroup {
  /** Where the group came from, in words (`--expect 10x50`, `LIBERO libero_spatial`). */
  label: string;
  tasks: number;
  /** Episodes per task: seeds 0 .. episodes-1 (vla-eval's episode_idx). */
  episodes: number;
  /** Task names, when the source names them; otherwise any task counts toward the group. */
  names?: string[];
}

export interface Expectation {
  source: string;
  groups: ExpectedGroup[];
}

export interface ArmCompleteness {
  expected: number;
  /** Expected cells with a finished episode record (errors included: they are shown as errors). */
  present: number;
  missing: number;
}

/** The `expected` section `provael report --expect` adds to what it prints. */
export interface Completeness {
  source: string;
  expected_tasks: number;
  episodes_per_task: number[];
  complete: boolean;
  arms: Record<string, ArmCompleteness>;
  /** Tasks that ran with some seeds missing: task → arm → missing seeds. */
  missing_seeds: Record<string, Record<string, number[]>>;
  /** Expected tasks that never appear in the run at all. */
  unseen_tasks: number;
  /** Named expected tasks that never appear (when the source names them). */
  unseen_task_names: string[];
  /** Episodes outside the expectation (another task, or a seed past the episode count). */
  unexpected_episodes: number;
}

const EXPECT_HINT = "pass --expect TASKSxEPISODES, e.g. --expect 10x50 for LIBERO-Spatial";

/**
 * `TASKSxEPISODES` (`10x50`, `10×50`).
 *
 * @example
 *   parseExpect("10x50"); // { source: "--expect 10x50", groups: [{ tasks: 10, episodes: 50, … }] }
 */
export function parseExpect(raw: string): Expectation {
  const m = /^\s*(\d+)\s*[x×*]\s*(\d+)\s*$/i.exec(raw);
  const tasks = Number(m?.[1]);
  const episodes = Number(m?.[2]);
  if (!m || !(tasks >= 1) || !(episodes >= 1)) {
    throw new ProvaelError("config/invalid", `--expect must be TASKSxEPISODES, got '${raw}'`, {
      details: { flag: "--expect", value: raw },
      hint: EXPECT_HINT,
    });
  }
  return {
    source: `--expect ${tasks}x${episodes}`,
    groups: [{ label: `--expect ${tasks}x${episodes}`, tasks, episodes }],
  };
}

/** Task counts of LIBERO's suites (LIBERO's benchmark registry; Pro/Plus variants share them). */
const LIBERO_SUITE_TASKS: Record<string, number> = {
  libero_spatial: 10,
  libero_object: 10,
  libero_goal: 10,
  libero_10: 10,
  libero_90: 90,
};

const entrySchema = z
  .object({
    benchmark: z.string().min(1),
    subname: z.string().optional(),
    episodes_per_task: z.int().min(1).default(1),
    max_tasks: z.int().min(1).nullable().optional(),
    tasks: z.array(z.string()).nullable().optional(),
    params: z.record(z.string(), z.unknown()).default({}),
  })
  .loose();

const configSchema = z.object({ benchmarks: z.array(entrySchema).min(1) }).loose();

/**
 * The expectation a vla-eval config implies: per benchmark entry, its task count (LIBERO: the
 * suite's, SimplerEnv: the one `task_name`; capped by `max_tasks`) × `episodes_per_task`.
 */
export function expectationFromVlaEvalConfig(path: string): Expectation {
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(path, "utf8"));
  } catch (e) {
    throw new ProvaelError(
      "io/read",
      `cannot read vla-eval config ${path}: ${(e as Error).message}`,
      {
        cause: e,
        hint: "pass the --config file of `vla-eval run`",
      },
    );
  }
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ProvaelError(
      "config/invalid",
      `vla-eval config ${path}: ${describeIssues(parsed.error)}`,
      {
        details: { issues: parsed.error.issues },
        hint: "pass the --config file of `vla-eval run`",
      },
    );
  }
  const groups = parsed.data.benchmarks.map((entry, i): ExpectedGroup => {
    const cls = entry.benchmark.split(":")[1] ?? entry.benchmark;
    const label = `benchmarks.${i} (${cls}${entry.subname ? ` ${entry.subname}` : ""})`;
    const suite = typeof entry.params.suite === "string" ? entry.params.suite : undefined;
    const taskName =
      typeof entry.params.task_name === "string" ? entry.params.task_name : undefined;
    let tasks: number | undefined;
    let names: string[] | undefined;
    if (/libero/i.test(entry.benchmark) && suite !== undefined && suite in LIBERO_SUITE_TASKS) {
      tasks = LIBERO_SUITE_TASKS[suite];
    } else if (/simpler/i.test(entry.benchmark) && taskName !== undefined) {
      tasks = 1;
      names = [taskName];
    }
    // A task filter naming tasks (not suites) fixes the count when nothing else does.
    const filter = (entry.tasks ?? []).filter((t) => t !== suite);
    if (tasks === undefined && filter.length > 0) {
      tasks = filter.length;
      names = filter;
    }
    if (tasks === undefined) {
      throw new ProvaelError(
        "config/invalid",
        `vla-eval config ${path}: cannot tell how many tasks ${label} has`,
        {
          details: { entry: i, benchmark: entry.benchmark },
          hint: `Provael knows the task counts of LIBERO suites and SimplerEnv tasks; for other benchmarks ${EXPECT_HINT.replace("pass ", "")}`,
        },
      );
    }
    if (entry.max_tasks) tasks = Math.min(tasks, entry.max_tasks);
    return {
      label,
      tasks,
      episodes: entry.episodes_per_task,
      ...(names ? { names: names.slice(0, tasks) } : {}),
    };
  });
  return { source: `--expect-from ${path}`, groups };
}

/**
 * What of the expectation the report covers, per arm. Named groups match tasks by name (the
 * bridge's task id ends with the benchmark's task name); unnamed groups take the remaining
 * tasks in order of appearance. Every arm is expected to run every expected cell.
 */
export function completeness(report: Report, expectation: Expectation): Completeness {
  const arms =
    report.run.arms.length > 0 ? report.run.arms : [...new Set(report.episodes.map((e) => e.arm))];
  const tasksSeen = [...new Set(report.episodes.map((e) => e.task))].sort();
  const assigned = new Map<string, ExpectedGroup>();
  const unseenNames: string[] = [];
  for (const g of expectation.groups) {
    for (const n of g.names ?? []) {
      const t = tasksSeen.find((s) => !assigned.has(s) && (s === n || s.endsWith(`/${n}`)));
      if (t === undefined) unseenNames.push(n);
      else assigned.set(t, g);
    }
  }
  let unseen = unseenNames.length;
  const rest = tasksSeen.filter((t) => !assigned.has(t));
  for (const g of expectation.groups) {
    if (g.names) continue;
    const take = rest.splice(0, g.tasks);
    for (const t of take) assigned.set(t, g);
    unseen += g.tasks - take.length;
  }
  const expectedTasks = expectation.groups.reduce((a, g) => a + g.tasks, 0);
  const expectedCells = expectation.groups.reduce((a, g) => a + g.tasks * g.episodes, 0);
  const out: Completeness = {
    source: expectation.source,
    expected_tasks: expectedTasks,
    episodes_per_task: [...new Set(expectation.groups.map((g) => g.episodes))].sort(
      (a, b) => a - b,
    ),
    complete: true,
    arms: {},
    missing_seeds: {},
    unseen_tasks: unseen,
    unseen_task_names: unseenNames,
    unexpected_episodes: 0,
  };
  const done = new Set<string>();
  for (const e of report.episodes) {
    const g = assigned.get(e.task);
    if (g === undefined || e.seed < 0 || e.seed >= g.episodes || e.repeat !== 0) {
      out.unexpected_episodes += 1;
      continue;
    }
    done.add(`${e.arm}\u0000${e.task}\u0000${e.seed}`);
  }
  for (const arm of arms) {
    let present = 0;
    for (const [task, g] of [...assigned.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const missing: number[] = [];
      for (let s = 0; s < g.episodes; s++) {
        if (done.has(`${arm}\u0000${task}\u0000${s}`)) present += 1;
        else missing.push(s);
      }
      if (missing.length > 0) {
        out.missing_seeds[task] ??= {};
        (out.missing_seeds[task] as Record<string, number[]>)[arm] = missing;
      }
    }
    out.arms[arm] = { expected: expectedCells, present, missing: expectedCells - present };
    if (present < expectedCells) out.complete = false;
  }
  if (arms.length === 0) out.complete = false;
  return out;
}

/** The completeness section in Markdown. */
export function renderCompletenessMarkdown(c: Completeness): string {
  const out: string[] = ["## Completeness", ""];
  const episodes = c.episodes_per_task.join(" or ");
  out.push(
    `Expected (${c.source}): ${c.expected_tasks} task(s) × ${episodes} episode(s) per arm. ${
      c.complete
        ? "Every expected cell has an episode record."
        : "**Incomplete:** the rates above cover only the cells that finished; the missing cells below are not in any denominator."
    }`,
  );
  out.push("", "| arm | expected | present | missing |", "| --- | ---: | ---: | ---: |");
  for (const [arm, a] of Object.entries(c.arms))
    out.push(`| ${arm} | ${a.expected} | ${a.present} | ${a.missing} |`);
  out.push("");
  if (c.unseen_tasks > 0) {
    const names = c.unseen_task_names.length > 0 ? `: ${c.unseen_task_names.join(", ")}` : "";
    out.push(`- ${c.unseen_tasks} expected task(s) never ran${names}.`);
  }
  for (const [task, byArm] of Object.entries(c.missing_seeds)) {
    const parts = Object.entries(byArm).map(([arm, seeds]) => `${arm}: ${compactSeeds(seeds)}`);
    out.push(`- ${task}: missing seeds ${parts.join("; ")}`);
  }
  if (c.unexpected_episodes > 0)
    out.push(
      `- ${c.unexpected_episodes} episode(s) fall outside the expectation (another task or seed).`,
    );
  out.push("");
  return out.join("\n");
}

function compactSeeds(seeds: number[]): string {
  const out: string[] = [];
  let i = 0;
  while (i < seeds.length) {
    let j = i;
    while (j + 1 < seeds.length && (seeds[j + 1] as number) === (seeds[j] as number) + 1) j++;
    out.push(i === j ? `${seeds[i]}` : `${seeds[i]}-${seeds[j]}`);
    i = j + 1;
  }
  return out.join(", ");
}
