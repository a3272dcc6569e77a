import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveAttacks } from "../attacks/index.js";
import { ProvaelError } from "../core/errors.js";
import { suites } from "../suites/index.js";
import { recipeKeyTable } from "./recipe-docs.js";
import { loadRecipe, RECIPE_FLAG_KEYS } from "./recipes.js";

const ROOT = join(import.meta.dirname, "..", "..");
const EXAMPLES = join(ROOT, "examples", "recipes");

function recipeFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), "provael-recipe-")), "r.yaml");
  writeFileSync(file, text);
  return file;
}

function refusal(file: string): ProvaelError {
  try {
    loadRecipe(file);
  } catch (e) {
    if (e instanceof ProvaelError) return e;
    throw e;
  }
  throw new Error(`${file} was accepted`);
}

describe("docs/recipes.md", () => {
  it("lists every key the recipe format takes (regenerate: UPDATE_DOCS=1 npx vitest run src/config/recipes.test.ts)", () => {
    const doc = join(ROOT, "docs", "recipes.md");
    const text = readFileSync(doc, "utf8");
    const block = /(<!-- recipe-keys:[^\n]*-->\n)([\s\S]*?)(<!-- \/recipe-keys -->)/;
    expect(text).toMatch(block);
    const table = `${recipeKeyTable()}\n`;
    if (process.env.UPDATE_DOCS === "1")
      writeFileSync(
        doc,
        text.replace(block, (_m, open, _old, close) => `${open}${table}${close}`),
      );
    else expect(text.match(block)?.[2]).toBe(table);
    for (const key of ["name", "description", "plugins", "suites", ...RECIPE_FLAG_KEYS])
      expect(table).toContain(`| \`${key}\` |`);
  });
});

describe("examples/recipes", () => {
  const files = readdirSync(EXAMPLES).filter((f) => /\.(ya?ml|json)$/.test(f));

  it("holds examples", () => {
    expect(files.length).toBeGreaterThanOrEqual(2);
  });

  it.each(files)("%s loads, and names attacks, suites and tasks that exist", (f) => {
    const recipe = loadRecipe(join(EXAMPLES, f));
    expect(resolveAttacks(recipe.attacks).length).toBeGreaterThan(0);
    const suiteIds = [recipe.suite ?? "tabletop", ...Object.keys(recipe.suites ?? {})];
    for (const id of suiteIds) expect(() => suites.get(id)).not.toThrow();
    const check = (suite: string, tasks: readonly string[] | undefined) => {
      const known = suites
        .get(suite)
        .tasks()
        .map((t) => t.id);
      for (const t of tasks ?? []) expect(known).toContain(t);
    };
    check(recipe.suite ?? "tabletop", recipe.tasks);
    for (const [id, o] of Object.entries(recipe.suites ?? {})) {
      check(id, o.tasks);
      if (o.attacks) expect(resolveAttacks(o.attacks).length).toBeGreaterThan(0);
    }
  });
});

describe("recipe files", () => {
  it("take one comma-separated string where a list is expected, as the flags do", () => {
    const r = loadRecipe(
      recipeFile(
        "name: c\nattacks: none, control,instruction\ntasks: fetch_cup\nsuites:\n  stub:\n    attacks: none,patch\n",
      ),
    );
    expect(r.attacks).toEqual(["none", "control", "instruction"]);
    expect(r.tasks).toEqual(["fetch_cup"]);
    expect(r.suites?.stub?.attacks).toEqual(["none", "patch"]);
  });

  it("refuse a misspelt key with the closest keys, at any depth", () => {
    const top = refusal(recipeFile("name: x\nattacks: [none]\nseedz: 3\n"));
    expect(top.code).toBe("config/invalid");
    expect(top.message).toMatch(/unknown key 'seedz' \(did you mean .*'seeds'/);
    const nested = refusal(
      recipeFile("name: x\nattacks: [none]\nsuites:\n  stub:\n    horizn: 3\n"),
    );
    expect(nested.message).toMatch(/unknown key 'suites\.stub\.horizn' \(did you mean 'horizon'/);
    expect(nested.hint).toMatch(/docs\/recipes\.md/);
  });

  it("say both a misspelt key and a bad value", () => {
    const e = refusal(recipeFile("name: x\nattacks: [none]\nseeds: 0\nrepeat: 2\n"));
    expect(e.message).toMatch(/unknown key 'repeat' \(did you mean 'repeats'/);
    expect(e.message).toMatch(/seeds/);
  });
});
