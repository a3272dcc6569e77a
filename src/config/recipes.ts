/**
 * Recipes: named base configurations for `provael attack`. Explicit flags override them. Every
 * recipe includes the baseline arm and the matched controls, so its numbers come with their floor
 * and their controls.
 */
import { dirname, resolve } from "node:path";
import { unknownName } from "../core/registry.js";
import { DEFAULTS } from "./defaults.js";
import { loadConfigFile } from "./load-file.js";
import { RECIPES, type Recipe, recipeSchema } from "./recipe-rules.js";

export {
  applyRecipe,
  commaTolerant,
  RECIPE_FLAG_KEYS,
  RECIPES,
  type Recipe,
  recipeSchema,
} from "./recipe-rules.js";

/** A built-in recipe by name, or a recipe file (YAML or JSON) by path. */
export function loadRecipe(nameOrFile: string): Recipe {
  const builtin = RECIPES.find((r) => r.name === nameOrFile);
  if (builtin) return builtin;
  if (!/[./\\]/.test(nameOrFile)) {
    throw unknownName(
      "recipe",
      nameOrFile,
      RECIPES.map((r) => r.name),
      "provael list-recipes",
      "config/unknown-recipe",
    );
  }
  const recipe = loadConfigFile(
    nameOrFile,
    recipeSchema,
    "recipe file",
    "docs/recipes.md lists every key a recipe takes",
  );
  // A recipe names its plugins beside itself, wherever the run is started from.
  return recipe.plugins
    ? { ...recipe, plugins: recipe.plugins.map((p) => resolve(dirname(nameOrFile), p)) }
    : recipe;
}

/** The defaults as they apply, per-suite overrides included (help text and list-recipes). */
export function effectiveDefaults(recipe: Recipe = loadRecipe("quick")): string {
  const lines = [
    `With no flags: --recipe ${recipe.name}: --attacks ${recipe.attacks.join(",")} (plus their matched controls), --seeds ${recipe.seeds ?? DEFAULTS.seeds}, every task of the suite.`,
  ];
  for (const [suite, o] of Object.entries(recipe.suites ?? {})) {
    lines.push(
      `On ${suite}, when no --attacks and no --tasks are given: ${[
        o.attacks ? `--attacks ${o.attacks.join(",")} (plus their matched controls)` : null,
        o.tasks ? `--tasks ${o.tasks.join(",")}` : null,
        o.seeds ? `--seeds ${o.seeds}` : null,
        o.horizon ? `--horizon ${o.horizon}` : null,
      ]
        .filter((x) => x !== null)
        .join(", ")}.`,
    );
  }
  lines.push(
    "Naming --attacks or --tasks plays exactly what is named, on the suite's other defaults.",
  );
  return lines.join("\n");
}
