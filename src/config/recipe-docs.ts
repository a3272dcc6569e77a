/**
 * The recipe file's keys as a Markdown table, built from the flag table (src/config/plan-flags.ts)
 * and the recipe schema, so docs/recipes.md cannot drift from what `--recipe FILE` accepts
 * (src/config/recipes.test.ts compares them; `UPDATE_DOCS=1` rewrites the block).
 */
import { z } from "zod";
import { planFlags } from "./plan-flags.js";
import { recipeSchema } from "./recipes.js";

/** The schema with optional and comma-string preprocessing peeled off. */
function core(schema: z.ZodType): { schema: z.ZodType; optional: boolean } {
  let s = schema;
  let optional = false;
  for (;;) {
    if (s instanceof z.ZodOptional) {
      optional = true;
      s = s.unwrap() as z.ZodType;
    } else if (s instanceof z.ZodDefault) {
      optional = true;
      s = s._zod.def.innerType as z.ZodType;
    } else if (s instanceof z.ZodPipe) s = s._zod.def.out as z.ZodType;
    else return { schema: s, optional };
  }
}

/** How a value of `schema` is written in a recipe file. */
export function typeOf(schema: z.ZodType): string {
  const s = core(schema).schema;
  if (s instanceof z.ZodString) return "string";
  if (s instanceof z.ZodNumber) {
    const int = s.format === "safeint" || s.isInt ? "integer" : "number";
    return s.minValue !== null && Number.isFinite(s.minValue) ? `${int} ≥ ${s.minValue}` : int;
  }
  if (s instanceof z.ZodEnum) return (s.options as string[]).map((o) => `\`${o}\``).join(" or ");
  if (s instanceof z.ZodArray)
    return `list of ${typeOf(s.element as z.ZodType)}s, or one comma-separated string`;
  if (s instanceof z.ZodRecord) return "map";
  return "value";
}

const shown = (v: unknown): string =>
  v === undefined ? "—" : Array.isArray(v) ? `\`${v.join(",")}\`` : `\`${String(v)}\``;

/** One row per key: the recipe's own keys, then those that set a flag, in the table's order. */
export function recipeKeyTable(): string {
  const shape = recipeSchema.shape as Record<string, z.ZodType>;
  const rows: string[][] = [
    ["`name`", typeOf(shape.name as z.ZodType), "required", "—", "the recipe's name"],
    [
      "`description`",
      typeOf(shape.description as z.ZodType),
      "empty",
      "—",
      "one line shown by `provael list-recipes`",
    ],
  ];
  for (const [key, flag] of planFlags("attack")) {
    if (!flag.recipe) continue;
    const required = !core(flag.recipe).optional;
    rows.push([
      `\`${key}\``,
      typeOf(flag.recipe),
      required ? "required" : shown(flag.default),
      `\`${flag.flag.split(" ")[0]}\``,
      flag.description.replace(/\|/g, "\\|"),
    ]);
  }
  rows.push(
    [
      "`plugins`",
      typeOf(shape.plugins as z.ZodType),
      "—",
      "`--plugin`",
      "plugin files, relative to the recipe file, loaded before the run",
    ],
    [
      "`suites`",
      "map of suite id → `attacks`, `tasks`, `seeds`, `horizon`",
      "—",
      "—",
      "per-suite overrides, applied only when neither `--attacks` nor `--tasks` is given",
    ],
  );
  const head = ["key", "type", "default", "flag", "what it sets"];
  return [head, head.map(() => "---"), ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n");
}
