/**
 * A red-team run played in a page (browser-safe): the plan from the same flags and recipe as
 * `provael attack`, the checks that need the loaded policy, and, as episodes come back from the
 * page's Web Workers, the arms table so far and finally the run's files. report.json,
 * trajectories.jsonl and report.md are built by the functions the CLI writes them with, so a page
 * and `provael attack` write the same bytes for the same plan.
 */
import { attacks } from "../attacks/index.js";
import { resolveParams } from "../attacks/params.js";
import {
  type FlagValues,
  flagName,
  type PlanFlagKey,
  planFromFlags,
} from "../config/plan-flags.js";
import { applyRecipe, attackFlagDefaults, RECIPES } from "../config/recipe-rules.js";
import { sha256 } from "../core/digest.js";
import type { EpisodeRecord, TrajectoryStep } from "../core/episode.js";
import { ProvaelError } from "../core/errors.js";
import { TOOL_VERSION } from "../core/package-root.js";
import { planFields } from "../core/plan.js";
import type { PolicyCapabilities } from "../core/types.js";
import { notApplicableReason, provenanceFor } from "../kernel/index.js";
import { policies } from "../policies/index.js";
import { reportArms } from "../report/arms.js";
import { checkSceneDigests, draftReport, sealReport } from "../report/assemble.js";
import type { Report } from "../report/build.js";
import { renderMarkdown } from "../report/markdown.js";
import { journalHeader, journalLine, trajectoryLines } from "../rundir/journal-lines.js";
import { type Cell, type PlanSpec, planCells, validatePlan } from "../runner/plan.js";
import type { CellResult, ExecutorSetup } from "../runner/play-cell.js";
import { checkWithPolicy } from "../runner/preflight.js";
import { suites } from "../suites/index.js";

/** What a page lets a person choose: the `provael attack` flags of the same names. */
export interface PageChoices {
  policy?: string;
  suite?: string;
  tasks?: string[];
  attacks?: string[];
  seeds?: number;
  seed?: number;
  recipe?: string;
}

/** The most episodes a page plays; a bigger plan is refused with the command that plays it. */
export const PAGE_MAX_EPISODES = 120;

/** The policies a page can play (every in-process policy; served ones need a server). */
export const PAGE_POLICIES = ["tiny-vla", "tiny-vla-backdoored", "scripted"] as const;
/** The suites a page can play (MuJoCo in WebAssembly). */
export const PAGE_SUITES = ["tabletop", "reach"] as const;

const CHOICE_ORDER: (keyof PageChoices & PlanFlagKey)[] = [
  "policy",
  "suite",
  "tasks",
  "attacks",
  "seed",
  "seeds",
  "recipe",
];

/** The `provael attack` command line that plays the same plan (the choices given, in flag order). */
export function commandLine(choices: PageChoices): string {
  const parts = ["provael", "attack"];
  for (const key of CHOICE_ORDER) {
    const v = choices[key];
    if (v === undefined) continue;
    parts.push(flagName(key), Array.isArray(v) ? v.join(",") : String(v));
  }
  return parts.join(" ");
}

export interface PagePlan {
  plan: PlanSpec;
  cells: Cell[];
  /** The CLI command for the same plan. */
  command: string;
  /** What the recipe did that a reader should know (as the CLI prints it). */
  note: string | null;
}

/**
 * The plan `provael attack` makes of the same flags: its defaults, the recipe under the flags
 * given, then the flag table. Checked as the CLI checks it before playing anything.
 */
export function pagePlan(choices: PageChoices): PagePlan {
  const recipeName = choices.recipe ?? "quick";
  const recipe = RECIPES.find((r) => r.name === recipeName);
  const command = commandLine(choices);
  if (!recipe) {
    throw new ProvaelError("config/unknown-recipe", `no built-in recipe '${recipeName}'`, {
      hint: `a page knows the built-in recipes (${RECIPES.map((r) => r.name).join(", ")})`,
    });
  }
  const given = Object.fromEntries(
    Object.entries(choices).filter(([, v]) => v !== undefined),
  ) as FlagValues;
  const { flags, note } = applyRecipe(
    { ...attackFlagDefaults(), ...given },
    recipe,
    (key) => key in given,
  );
  const policy = String(flags.policy);
  const suiteId = String(flags.suite);
  if (
    !(PAGE_POLICIES as readonly string[]).includes(policy) ||
    !(PAGE_SUITES as readonly string[]).includes(suiteId)
  ) {
    throw new ProvaelError(
      "config/incompatible",
      `a page plays ${PAGE_POLICIES.join(", ")} on ${PAGE_SUITES.join(", ")}, not ${policy} on ${suiteId}`,
      { hint: `play it with the CLI: ${command}` },
    );
  }
  policies.get(policy);
  const suite = suites.get(suiteId);
  const suiteTasks = suite.tasks().map((t) => t.id);
  const plan = planFromFlags("attack", flags, {
    suiteTasks,
    calibrations: {},
    servedPlan: {},
  }) as PlanSpec;
  validatePlan(plan, suiteTasks);
  for (const arm of plan.arms) resolveParams(attacks.get(arm), plan.attack_params);
  const cells = planCells(plan);
  if (cells.length > PAGE_MAX_EPISODES) {
    throw new ProvaelError(
      "config/invalid",
      `this plan has ${cells.length} episodes; a page plays at most ${PAGE_MAX_EPISODES}`,
      { details: { episodes: cells.length }, hint: `play it with the CLI: ${command}` },
    );
  }
  return { plan, cells, command, note };
}

/** What a Web Worker learned by loading the policy once: the CLI's probe. */
export interface PageProbe {
  digest: string | null;
  capabilities: PolicyCapabilities;
}

/**
 * What every Web Worker plays with, after the checks that need the loaded policy (pairing,
 * scenes) and each arm's applicability, as `provael attack` decides them.
 */
export function pageSetup(plan: PlanSpec, probe: PageProbe): ExecutorSetup {
  const suite = suites.get(plan.suite);
  const policy = policies.get(plan.policy);
  const policyOptions = {
    ...plan.policy_options,
    extra: { ...((plan.policy_options.extra ?? {}) as Record<string, unknown>) },
  };
  checkWithPolicy({ policyOptions }, { plan, suite, policy, calibrations: {} }, probe);
  const applicable: Record<string, boolean> = {};
  const notApplicable: Record<string, string> = {};
  for (const arm of plan.arms) {
    const reason = notApplicableReason(attacks.get(arm), probe.capabilities, suite.capabilities);
    applicable[arm] = reason === null;
    if (reason !== null)
      notApplicable[arm] =
        `${reason}; ${reason.startsWith("needs a policy") ? plan.policy : plan.suite} does not`;
  }
  return { plan, policyOptions, calibrations: {}, applicable, notApplicable };
}

/** The files a finished page run offers, byte for byte what the CLI writes. */
export interface PageOutputs {
  report: Report;
  reportJson: string;
  /** `sha256:…` of report.json: the run's digest. */
  digest: string;
  trajectories: string;
  journal: string;
  markdown: string;
}

/** The episodes of a page run so far, and the report they make. */
export class PageRun {
  private readonly results = new Map<
    string,
    { record: EpisodeRecord; trajectory: TrajectoryStep[] }
  >();
  private readonly journalLines: string[];
  private readonly fields: Record<string, string>;

  constructor(
    readonly plan: PlanSpec,
    readonly cells: readonly Cell[],
    private readonly probe: PageProbe,
  ) {
    this.fields = planFields(plan);
    this.journalLines = [
      journalLine(journalHeader(plan, { shard: null, policy_digest: probe.digest })),
    ];
  }

  get done(): number {
    return this.results.size;
  }

  /** A finished episode, journalled in the order it came back (as the CLI's journal is). */
  add(result: CellResult): void {
    this.results.set(result.record.cell, result);
    this.journalLines.push(
      journalLine({
        type: "episode",
        plan_fields: this.fields,
        record: result.record,
        trajectory: result.trajectory,
      }),
    );
  }

  record(cell: string): EpisodeRecord | undefined {
    return this.results.get(cell)?.record;
  }

  /** The report of the episodes so far (the live arms table reads it). */
  draft(): Report {
    return draftReport(this.reportInput());
  }

  private reportInput() {
    const suite = suites.get(this.plan.suite);
    return {
      plan: this.plan,
      arms: reportArms(this.plan),
      toolVersion: TOOL_VERSION,
      policyDigest: this.probe.digest,
      episodes: [...this.results.values()].map((r) => r.record),
      calibration: Object.fromEntries(this.plan.tasks.map((t) => [t, provenanceFor(suite, t, {})])),
      shard: null,
      bridge: null,
      servedModel: null,
    };
  }

  /** The run's files once every cell has played. */
  finish(): PageOutputs {
    if (this.results.size < this.cells.length) {
      throw new ProvaelError(
        "internal/invariant",
        `${this.cells.length - this.results.size} cell(s) have not played yet`,
      );
    }
    const input = this.reportInput();
    checkSceneDigests(input.episodes);
    const draft = draftReport(input);
    // Trajectories in report order, as outputs.ts writes them.
    const trajectories = draft.episodes
      .map((ep) => trajectoryLines(this.results.get(ep.cell)?.trajectory ?? []))
      .join("");
    const { report, json, digest } = sealReport(draft, sha256(trajectories));
    return {
      report,
      reportJson: json,
      digest,
      trajectories,
      journal: this.journalLines.join(""),
      markdown: renderMarkdown(report),
    };
  }
}
