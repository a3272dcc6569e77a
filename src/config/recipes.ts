/**
 * Recipes: named base configurations for `provael attack`. Explicit flags override them. Every
 * recipe includes the baseline arm and the matched controls, so its numbers come with their floor
 * and their controls.
 */
import { dirname, resolve } from "node:path";
import { unknownName } from "../core/registry.js";
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
