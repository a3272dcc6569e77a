/**
 * The plan flags, each declared once: its command-line spelling and parser, the commands that
 * take it, the recipe key that may set it, what `--from REPORT` does with it, and the part of
 * the plan it sets. `provael attack` and `provael bridge` build their options, their recipe
 * schema, the `--from` refusal and the plan from this table, so a new plan field is this entry
 * and the plan schema's field (src/core/plan.ts), and every command that takes the flag records
 * it and refuses to resume under another value.
 */
import type { Command } from "commander";
import { z } from "zod";
import { attacks, resolveAttacks, withMatchedControls } from "../attacks/index.js";
import { ProvaelError } from "../core/errors.js";
import {
  type DefensePlan,
  MULTIPLICITIES,
  type PlanSpec,
  TERMINATIONS,
  terminationSchema,
  type Waiver,
} from "../core/plan.js";
import { redactUrl } from "../core/redact.js";
import { describeIssues } from "../core/zod-issues.js";
import { resolveDefenseParams, resolveDefenses } from "../defenses/index.js";
import { DEFAULTS } from "./defaults.js";
import {
  checkKeyedParams,
  choice,
  commaList,
  integer,
  keyedParam,
  list,
  type ParamValue,
  policyOption,
} from "./parse.js";

/** The commands that play a plan. */
export type PlanCommand = "attack" | "bridge";

/** What the plan's builder knows beside the flags: the suite's tasks, the calibrations. */
export interface PlanContext {
  /** The suite's tasks, in its order (the default of `--tasks`). */
  suiteTasks: readonly string[];
  /** Per task, the digest of the calibration that scores it (`--calib`). */
  calibrations: Readonly<Record<string, string>>;
  /** The served-policy options that change behaviour (`--layout`, `--replan`, …). */
  servedPlan: Readonly<Record<string, unknown>>;
}

/** Flag values as commander hands them over (camelCase keys). */
export type FlagValues = Record<string, unknown>;

export interface PlanFlag {
  /** Commander's spelling: `--seeds <n>`, `--allow-training-scenes`, `--no-controls`. */
  flag: string;
  description: string;
  /** Per command, a description that differs from the one above. */
  describe?: Partial<Record<PlanCommand, string>>;
  /** Parses one occurrence (with the value so far, for repeatable flags). */
  parse?: (raw: string, previous: never) => unknown;
  /** The value when the flag is not given (none: undefined). */
  default?: unknown;
  commands: readonly PlanCommand[];
  /** Commands where the flag must be given. */
  required?: readonly PlanCommand[];
  /** The recipe key of the same name and its schema (`.optional()` unless a recipe must set it). */
  recipe?: z.ZodType;
  /**
   * With `--from REPORT`: `report` when the report holds what the flag says (giving the flag too
   * is refused, it would change the replayed plan); `flag` when a report cannot carry it and it
   * is given again (paths, addresses, operational settings).
   */
  replay: "report" | "flag";
  /** The part of the plan the flag sets, from all the flag values (absent: none). */
  plan?: (flags: FlagValues, ctx: PlanContext, plan: Partial<PlanSpec>) => Partial<PlanSpec>;
  /** With `--from`, the part of the plan a `flag`-replayed flag adds to the report's plan. */
  onReplay?: (flags: FlagValues, plan: PlanSpec) => Partial<PlanSpec>;
}

const str = (v: unknown) => v as string;

/** The plan's `policy_url`: one server's address, secrets redacted; none for a pool. */
const recordedUrl = (f: FlagValues): Partial<PlanSpec> => {
  const urls = (f.policyUrl ?? []) as string[];
  return urls.length === 1 ? { policy_url: redactUrl(urls[0] as string) } : {};
};

/** A waiver flag adds its waiver (waivers are absent when none, so older plans keep digests). */
const waive = (given: unknown, waiver: Waiver, plan: Partial<PlanSpec>) =>
  given ? { waivers: [...(plan.waivers ?? []), waiver] } : {};
const num = (v: unknown) => v as number;

/**
 * Attack parameters checked before anything runs: each names an arm of the run and parses under
 * its attack's schema. Returned as given (keys sorted), so a plan written without them is unchanged.
 */
export function checkAttackParamsOf(
  given: Record<string, Record<string, unknown>>,
  arms: readonly string[],
): Record<string, Record<string, unknown>> {
  return checkKeyedParams("--attack-param", "arm", given, arms, checkAttackParams);
}

/** Attack parameters parse under their attack's schema (defaults are filled in by the run). */
function checkAttackParams(arm: string, params: Record<string, unknown>): void {
  const parsed = attacks.get(arm).params.safeParse(params);
  if (!parsed.success) {
    throw new ProvaelError(
      "config/invalid",
      `--attack-param for '${arm}' is not valid: ${describeIssues(parsed.error, "(params)")}`,
      { details: { given: params }, hint: "see the parameters in `provael list-attacks --json`" },
    );
  }
}

/**
 * The plan's defenses from --defenses / --compare-defenses / --defense-param (absent when none,
 * so plans without defenses keep their digests); ids and params checked before anything runs.
 */
export function defensePlanOf(flags: FlagValues): { defenses?: DefensePlan } {
  const given = (flags.defenseParam ?? {}) as Record<string, Record<string, unknown>>;
  const defenses = flags.defenses as string[] | undefined;
  const compare = flags.compareDefenses as string[] | undefined;
  if (defenses && compare) {
    throw new ProvaelError(
      "config/invalid",
      "--defenses and --compare-defenses exclude each other",
      { hint: "--defenses defends every arm; --compare-defenses plays every arm both ways" },
    );
  }
  const spec = compare ?? defenses;
  if (!spec) {
    if (Object.keys(given).length > 0)
      throw new ProvaelError(
        "config/invalid",
        "--defense-param without --defenses or --compare-defenses",
        { hint: "name the defenses the params are for" },
      );
    return {};
  }
  const ids = resolveDefenses(spec);
  const params = checkKeyedParams("--defense-param", "defense", given, ids, (id) =>
    resolveDefenseParams(id, given),
  );
  return { defenses: { ids, compare: compare !== undefined, params } };
}

/**
 * Every plan flag, in the order the help lists them. Keys are commander's option names (the
 * flag in camelCase), which are also the recipe keys.
 */
export const PLAN_FLAGS = {
  policy: {
    flag: "--policy <id>",
    description: "policy under test (provael list-policies)",
    describe: { bridge: "upstream policy: vla-eval, openpi, openvla or a built-in one" },
    default: DEFAULTS.policy,
    commands: ["attack", "bridge"],
    required: ["bridge"],
    recipe: z.string().optional(),
    replay: "report",
    plan: (f) => ({ policy: str(f.policy) }),
  },
  suite: {
    flag: "--suite <id>",
    description:
      "suite to play (provael list-suites), or vla-eval to launch a vla-eval benchmark through the bridge (--benchmark)",
    default: DEFAULTS.suite,
    commands: ["attack"],
    recipe: z.string().optional(),
    replay: "report",
    plan: (f) => ({ suite: str(f.suite) }),
  },
  tasks: {
    flag: "--tasks <list>",
    description:
      "tasks to play, comma-separated (default: all of the suite's, except in the no-flag run below)",
    parse: list,
    commands: ["attack"],
    recipe: z.array(z.string()).optional(),
    replay: "report",
    plan: (f, ctx) => ({ tasks: (f.tasks as string[] | undefined) ?? [...ctx.suiteTasks] }),
  },
  attacks: {
    flag: "--attacks <list>",
    description: "attacks or families, comma-separated (provael list-attacks)",
    describe: { bridge: "arms, comma-separated (provael list-attacks)" },
    parse: list,
    default: [...DEFAULTS.attacks],
    commands: ["attack", "bridge"],
    required: ["bridge"],
    recipe: z.array(z.string()).min(1),
    replay: "report",
    plan: (f) => {
      const named = resolveAttacks(f.attacks as string[]);
      // `attack` adds the matched controls unless --no-controls; the bridge serves what it is told.
      return { arms: f.controls === true ? withMatchedControls(named) : named };
    },
  },
  controls: {
    flag: "--no-controls",
    description:
      "do not add the matched controls of the named treatments (the headline then warns)",
    commands: ["attack"],
    replay: "report",
  },
  seed: {
    flag: "--seed <n>",
    description: "first seed",
    parse: integer("--seed", { min: 0 }),
    default: DEFAULTS.seed,
    commands: ["attack"],
    recipe: z.number().int().min(0).optional(),
    replay: "report",
    plan: (f) => ({ seed: num(f.seed) }),
  },
  seeds: {
    flag: "--seeds <n>",
    description: "number of seeds per (task, arm)",
    parse: integer("--seeds", { min: 1 }),
    default: DEFAULTS.seeds,
    commands: ["attack"],
    recipe: z.number().int().min(1).optional(),
    replay: "report",
    plan: (f) => ({ seeds: num(f.seeds) }),
  },
  repeats: {
    flag: "--repeats <n>",
    description: "episodes per seed",
    parse: integer("--repeats", { min: 1 }),
    default: DEFAULTS.repeats,
    commands: ["attack"],
    recipe: z.number().int().min(1).optional(),
    replay: "report",
    plan: (f) => ({ repeats: num(f.repeats) }),
  },
  horizon: {
    flag: "--horizon <n>",
    description: "steps per episode (default: each task's)",
    parse: integer("--horizon", { min: 1 }),
    commands: ["attack"],
    recipe: z.number().int().min(1).optional(),
    replay: "report",
    plan: (f) => ({ horizon: f.horizon === undefined ? null : num(f.horizon) }),
  },
  termination: {
    flag: "--termination <rule>",
    description: "fixed-horizon or first-event",
    parse: choice("--termination", TERMINATIONS),
    default: DEFAULTS.termination,
    commands: ["attack"],
    recipe: terminationSchema.optional(),
    replay: "report",
    plan: (f) => ({ termination: f.termination as PlanSpec["termination"] }),
  },
  concurrency: {
    flag: "--concurrency <n>",
    description: "episodes in flight at once",
    parse: integer("--concurrency", { min: 1 }),
    default: DEFAULTS.concurrency,
    commands: ["attack"],
    recipe: z.number().int().min(1).optional(),
    replay: "flag",
  },
  multiplicity: {
    flag: "--multiplicity <procedure>",
    description:
      "multiplicity procedure of the primary test across treatment arms: holm (family-wise error) or bh (false discovery rate)",
    parse: choice("--multiplicity", MULTIPLICITIES),
    default: "holm",
    commands: ["attack"],
    replay: "report",
    // Holm is left out of the plan, so plans written before the option keep their digests.
    plan: (f) => (f.multiplicity === "bh" ? { multiplicity: "bh" as const } : {}),
  },
  scenePin: {
    flag: "--scene-pin <n>",
    description: "scene offset: seed s plays scene (pin + s) mod N",
    parse: integer("--scene-pin", { min: 0 }),
    default: DEFAULTS.scenePin,
    commands: ["attack"],
    replay: "report",
    plan: (f) => ({ scene_pin: num(f.scenePin) }),
  },
  policyPath: {
    flag: "--policy-path <path>",
    description: "weights or model file for the policy",
    describe: { bridge: "weights or model file for an in-process policy" },
    commands: ["attack", "bridge"],
    // A report names weights by digest, not by path: the path is given again, and the run
    // checks the loaded weights against that digest.
    replay: "flag",
    plan: (f) => (f.policyPath ? { policy_options: { path: str(f.policyPath) } } : {}),
    onReplay: (f, plan) =>
      f.policyPath ? { policy_options: { path: str(f.policyPath), ...plan.policy_options } } : {},
  },
  policyUrl: {
    flag: "--policy-url <url>",
    description:
      "server address for a served policy; repeat it (or a comma list) for a pool of servers of the same policy, --concurrency episodes each",
    describe: {
      bridge:
        "upstream server address; repeat it (or a comma list) to spread the benchmark's connections over servers of the same policy",
    },
    parse: commaList,
    commands: ["attack", "bridge"],
    // One server's address is recorded with its secrets redacted (user, password, secret query
    // values), so a resume against another server is refused; a pool of servers is operational
    // (the execution manifest's policy_pool). A report does not carry it: --from takes it again.
    replay: "flag",
    plan: (f) => recordedUrl(f),
    onReplay: (f) => recordedUrl(f),
  },
  policyOption: {
    flag: "--policy-option <key=value>",
    description: "policy option, repeatable",
    parse: policyOption,
    default: {},
    commands: ["attack", "bridge"],
    replay: "report",
    // The options that change behaviour (path, options, served-policy behaviour) join the
    // plan; secrets and timeouts reach only the policy.
    plan: (f, ctx, plan) => {
      const extra = {
        ...((f.policyOption ?? {}) as Record<string, ParamValue>),
        ...ctx.servedPlan,
      };
      return {
        policy_options: {
          ...(plan.policy_options ?? {}),
          ...(Object.keys(extra).length > 0 ? { extra } : {}),
        },
      };
    },
  },
  attackParam: {
    flag: "--attack-param <arm.key=value>",
    description:
      "an attack's parameter (budgets, bounds: see `provael list-attacks --json`), repeatable; e.g. gradient_patch.epsilon=32/255",
    parse: keyedParam("--attack-param", "arm", "gradient_patch.epsilon=32/255"),
    default: {},
    commands: ["attack", "bridge"],
    replay: "report",
    plan: (f, _ctx, plan) => ({
      attack_params: checkAttackParamsOf(
        (f.attackParam ?? {}) as Record<string, Record<string, unknown>>,
        plan.arms ?? [],
      ),
    }),
  },
  calib: {
    flag: "--calib <dir>",
    description: "calibrations from `provael calibrate` for this policy and suite",
    describe: { bridge: "calibrations from `provael calibrate` for this policy and profile" },
    commands: ["attack", "bridge"],
    // With --from the report's calibration digests stand, and the files given are checked
    // against them.
    replay: "flag",
    plan: (_f, ctx, plan) => ({
      calibration: Object.fromEntries(
        (plan.tasks ?? [])
          .filter((t) => ctx.calibrations[t])
          .map((t) => [t, ctx.calibrations[t] as string]),
      ),
    }),
  },
  allowCalibrationOverlap: {
    flag: "--allow-calibration-overlap",
    description:
      "score on scenes the --calib calibration was fitted or thresholded on (recorded, printed in the headline)",
    commands: ["attack"],
    replay: "report",
    plan: (f, _ctx, plan) => waive(f.allowCalibrationOverlap, "calibration-overlap", plan),
  },
  allowTrainingScenes: {
    flag: "--allow-training-scenes",
    description: "score the policy on scenes it was trained on (recorded, printed in the headline)",
    commands: ["attack"],
    replay: "report",
    plan: (f, _ctx, plan) => waive(f.allowTrainingScenes, "training-scenes", plan),
  },
  defenses: {
    flag: "--defenses <ids>",
    description: "defenses applied in every arm, comma-separated (provael list-defenses)",
    parse: commaList,
    commands: ["attack", "bridge"],
    replay: "report",
  },
  compareDefenses: {
    flag: "--compare-defenses <ids>",
    description:
      "play every arm undefended and with these defenses on the same cells, comma-separated; the report adds the mitigation",
    describe: {
      bridge:
        "serve every arm undefended at /arms/<arm> and defended at /arms/<arm>+<id>+… (one vla-eval run each)",
    },
    parse: commaList,
    commands: ["attack", "bridge"],
    replay: "report",
  },
  defenseParam: {
    flag: "--defense-param <defense.key=value>",
    description:
      "a defense's parameter, repeatable; e.g. action_shield.margin=0.03 (JSON for objects)",
    parse: keyedParam("--defense-param", "defense", "action_shield.margin=0.03"),
    default: {},
    commands: ["attack", "bridge"],
    replay: "report",
    plan: (f) => defensePlanOf(f),
  },
  recipe: {
    flag: "--recipe <name|file>",
    description: "base configuration (provael list-recipes); explicit flags override it",
    default: "quick",
    commands: ["attack"],
    replay: "report",
  },
} as const satisfies Record<string, PlanFlag>;

export type PlanFlagKey = keyof typeof PLAN_FLAGS;

/** The table's entries, in order, as `PlanFlag`s. */
export function planFlags(command?: PlanCommand): [PlanFlagKey, PlanFlag][] {
  return (Object.entries(PLAN_FLAGS) as [PlanFlagKey, PlanFlag][]).filter(
    ([, f]) => command === undefined || f.commands.includes(command),
  );
}

/** The recipe keys that set a flag of the same name, and their schemas, in table order. */
export const RECIPE_FLAG_SHAPE = Object.fromEntries(
  planFlags().flatMap(([key, f]) => (f.recipe ? [[key, f.recipe]] : [])),
) as {
  [K in PlanFlagKey as (typeof PLAN_FLAGS)[K] extends { recipe: z.ZodType }
    ? K
    : never]: (typeof PLAN_FLAGS)[K] extends { recipe: infer S } ? S : never;
};

/** Flags that `--from` refuses for `command`: the report holds what they say. */
export function replayedFlags(command: PlanCommand): PlanFlagKey[] {
  return planFlags(command)
    .filter(([, f]) => f.replay === "report")
    .map(([k]) => k);
}

/** The flag's spelling without its argument: `--scene-pin`, `--no-controls`. */
export const flagName = (key: PlanFlagKey): string =>
  (PLAN_FLAGS[key] as PlanFlag).flag.split(" ")[0] as string;

/** The plan the flags of `command` say, in the table's order. */
export function planFromFlags(
  command: PlanCommand,
  flags: FlagValues,
  ctx: PlanContext,
): Partial<PlanSpec> {
  let plan: Partial<PlanSpec> = {};
  for (const [, f] of planFlags(command))
    if (f.plan) plan = { ...plan, ...f.plan(flags, ctx, plan) };
  return plan;
}

/** A report's plan with what the `flag`-replayed flags add (a weights path, a server address). */
export function replayedPlan(command: PlanCommand, flags: FlagValues, plan: PlanSpec): PlanSpec {
  let out = plan;
  for (const [, f] of planFlags(command))
    if (f.onReplay) out = { ...out, ...f.onReplay(flags, out) };
  return out;
}

/** Declares `command`'s plan flags on a commander command, in the table's order. */
export function addPlanFlags(cmd: Command, command: PlanCommand): Command {
  for (const [, f] of planFlags(command)) {
    const description = f.describe?.[command] ?? f.description;
    const required = f.required?.includes(command) ?? false;
    const add = (required ? cmd.requiredOption : cmd.option).bind(cmd) as (
      ...args: unknown[]
    ) => Command;
    // A required flag has no default: a default would satisfy the requirement silently.
    const fallback = required ? undefined : f.default;
    if (f.parse) add(f.flag, description, f.parse, fallback);
    else if (fallback !== undefined) add(f.flag, description, fallback);
    else add(f.flag, description);
  }
  return cmd;
}

/** With `--from FILE`, refuses the flags whose values the report holds (they would change it). */
export function refuseReplayedFlags(cmd: Command, command: PlanCommand, file: string): void {
  const given = replayedFlags(command).filter((k) => cmd.getOptionValueSource(k) === "cli");
  if (given.length > 0) {
    throw new ProvaelError(
      "config/invalid",
      `--from replays the plan ${file} recorded; ${given.map(flagName).join(", ")} would change it`,
      {
        details: { flags: given },
        hint: "drop those flags (the report holds them), or start a new run without --from",
      },
    );
  }
}
