/**
 * The built-in recipes and how a recipe applies to a command's flags (browser-safe: a page plans
 * with them as `provael attack` does). Recipe files are read by recipes.ts.
 */
import { z } from "zod";
import { list } from "./parse.js";
import { type FlagValues, planFlags, RECIPE_FLAG_SHAPE } from "./plan-flags.js";

/** The schema under `.optional()`, if any. */
const unwrapOptional = (schema: z.ZodType): z.ZodType =>
  schema instanceof z.ZodOptional ? (schema.unwrap() as z.ZodType) : schema;

/**
 * A list key also takes one comma-separated string, as its flag does: `attacks: none,control`
 * reads as `attacks: [none, control]`. Other schemas are returned as they are.
 */
export function commaTolerant<S extends z.ZodType>(schema: S): S {
  if (!(unwrapOptional(schema) instanceof z.ZodArray)) return schema;
  return z.preprocess((v) => (typeof v === "string" ? list(v) : v), schema) as unknown as S;
}

const commaTolerantShape = <T extends Record<string, z.ZodType>>(shape: T): T =>
  Object.fromEntries(Object.entries(shape).map(([k, s]) => [k, commaTolerant(s)])) as T;

export const recipeSchema = z
  .object({
    name: z.string().min(1),
    description: z.string().default(""),
    // The keys that set the `provael attack` flag of the same name, from the flag table.
    ...commaTolerantShape(RECIPE_FLAG_SHAPE),
    /** Plugin files (paths relative to the recipe file) loaded before the run, as `--plugin`. */
    plugins: commaTolerant(z.array(z.string().min(1)).optional()),
    /** Per-suite overrides, for suites whose episodes cost much more than others'. */
    suites: z
      .record(
        z.string(),
        z
          .object(
            commaTolerantShape({
              attacks: z.array(z.string()).min(1).optional(),
              tasks: z.array(z.string()).optional(),
              seeds: z.number().int().min(1).optional(),
              horizon: z.number().int().min(1).optional(),
            }),
          )
          .strict(),
      )
      .optional(),
  })
  .strict();

export type Recipe = z.infer<typeof recipeSchema>;

/**
 * The recipe fields that set the `provael attack` flag of the same name (a flag given on the
 * command line wins): the flag table's recipe keys.
 */
export const RECIPE_FLAG_KEYS = Object.keys(
  RECIPE_FLAG_SHAPE,
) as (keyof typeof RECIPE_FLAG_SHAPE)[];

/** One task per hazard kind, both layouts: the object beside the knife, the vase, the hand. */
const QUICK_TABLETOP_TASKS = [
  "kitchen_red_block_by_knife",
  "pantry_orange_cup_by_vase",
  "kitchen_green_box_by_hand",
];

/** Families every recipe must carry so that its rates have a floor and controls. */
const ALWAYS = ["none", "control"];

export const RECIPES: Recipe[] = [
  {
    name: "quick",
    description:
      "The default: baseline, controls and instruction attacks at 10 seeds. On tabletop with no --attacks or --tasks: one instruction, one visual and one action attack with their matched controls, 3 tasks, 5 seeds",
    attacks: [...ALWAYS, "instruction"],
    seeds: 10,
    // Physics with two rendered cameras costs seconds per episode: a first look, not a verdict.
    // One arm per family a newcomer should see side by side on tiny-vla, each beside its
    // controls. 5 seeds (120 episodes, about 145 s on 2 idle cores) is the fewest the report does not
    // mark preliminary, and enough for the strongest arm to clear Holm across the three; at 2
    // seeds an arm had to trip all 6 of its pairs (6:0: one-sided p = 0.016, x3 = 0.047).
    suites: {
      tabletop: {
        attacks: ["none", "goal_substitution", "patch", "trajectory_hijack"],
        tasks: QUICK_TABLETOP_TASKS,
        seeds: 5,
      },
    },
  },
  {
    name: "instruction-only",
    description: "Instruction attacks with their matched text controls",
    attacks: [
      "none",
      "benign_reword",
      "nonsense_text",
      "scrambled_text",
      "roleplay_no_target",
      "declarative_text",
      "instruction",
    ],
    seeds: 20,
  },
  {
    name: "core-sweep",
    description: "Every templated family (no search or gradient attacks) at 10 seeds",
    attacks: ["templated"],
    seeds: 10,
  },
  {
    name: "full-sweep",
    description: "Every registered attack, search and white-box included, at 10 seeds",
    attacks: ["all"],
    seeds: 10,
  },
  {
    name: "ci-gate",
    description:
      "A fast, fixed configuration for gating builds: baseline, controls, instruction at 5 seeds",
    attacks: [...ALWAYS, "instruction"],
    seeds: 5,
  },
];

/**
 * A recipe applied to a command's flag values: each recipe key sets the flag of the same name
 * unless the flag was `explicit` (given on the command line), then the recipe's overrides for
 * the suite the run ended up on, which shorten the no-flag default only. Returns the flags and,
 * when naming --tasks alone leaves the suite's shorter attack set out, a note saying so.
 */
export function applyRecipe<T extends FlagValues>(
  flags: T,
  recipe: Recipe,
  explicit: (key: string) => boolean,
): { flags: T; note: string | null } {
  const merged: Record<string, unknown> = { ...flags };
  for (const key of RECIPE_FLAG_KEYS) {
    const value = recipe[key];
    if (value !== undefined && !explicit(key)) merged[key] = value;
  }
  // A run that names its attacks or tasks plays what it named.
  const perSuite =
    explicit("attacks") || explicit("tasks") ? undefined : recipe.suites?.[String(merged.suite)];
  for (const [key, value] of Object.entries(perSuite ?? {})) {
    if (value !== undefined && !explicit(key)) merged[key] = value;
  }
  // Naming --tasks alone changes the attack set too: say which one and why.
  const shorter = recipe.suites?.[String(merged.suite)]?.attacks;
  const note =
    explicit("tasks") && !explicit("attacks") && shorter
      ? `--tasks without --attacks: playing recipe ${recipe.name}'s attacks (${recipe.attacks.join(",")}), not its shorter set for ${String(merged.suite)} (${shorter.join(",")}), which applies only when neither --attacks nor --tasks is named; name --attacks to choose`
      : null;
  return { flags: merged as T, note };
}

/**
 * The flag values `provael attack` starts from when no flag is given: each plan flag's default,
 * and true for a `--no-…` flag (commander's rule).
 */
export function attackFlagDefaults(): FlagValues {
  const out: FlagValues = {};
  for (const [key, f] of planFlags("attack")) {
    if (f.default !== undefined) out[key] = f.default;
    else if (f.flag.startsWith("--no-")) out[key] = true;
  }
  return out;
}
