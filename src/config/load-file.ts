/** Reading a YAML or JSON configuration file and validating it with zod, with clear errors. */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { ProvaelError } from "../core/errors.js";
import { closest } from "../core/registry.js";
import { describeIssues } from "../core/zod-issues.js";

/** The schema a value is checked against once optional, default and preprocessing are peeled. */
function peel(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (;;) {
    const def = s._zod.def as { innerType?: z.ZodType; out?: z.ZodType };
    if (def.innerType) s = def.innerType;
    else if (s instanceof z.ZodPipe && def.out) s = def.out;
    else return s;
  }
}

/** The keys the object schema at `path` inside `schema` takes (none where no object is). */
function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let s = peel(schema);
  for (const step of path) {
    if (s instanceof z.ZodObject) s = s.shape[String(step)] as z.ZodType;
    else if (s instanceof z.ZodRecord) s = s._zod.def.valueType as z.ZodType;
    else if (s instanceof z.ZodArray) s = s.element as z.ZodType;
    else return [];
    if (!s) return [];
    s = peel(s);
  }
  return s instanceof z.ZodObject ? Object.keys(s.shape) : [];
}

/**
 * Each key the schema does not take, with the closest keys it does (`seedz` → `seeds`), as the
 * command line answers a misspelt flag; empty when every key is known.
 */
export function unknownKeys(schema: z.ZodType, error: z.ZodError): string[] {
  return error.issues.flatMap((issue) => {
    if (issue.code !== "unrecognized_keys") return [];
    const valid = keysAt(schema, issue.path);
    return issue.keys.map((key) => {
      const near = closest(key, valid);
      const where = [...issue.path.map(String), key].join(".");
      const suggestion =
        near.length > 0 ? ` (did you mean ${near.map((n) => `'${n}'`).join(", ")}?)` : "";
      return `unknown key '${where}'${suggestion}`;
    });
  });
}

/**
 * @param what how the file is named in messages ("recipe file", "acceptance protocol")
 * @param hint what the user should look at when the contents are invalid
 */
export function loadConfigFile<T>(
  path: string,
  schema: z.ZodType<T>,
  what: string,
  hint: string,
): T {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new ProvaelError("io/read", `cannot read ${what} ${path}`, {
      cause: e,
      hint: "check the path",
    });
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    throw new ProvaelError(
      "io/malformed",
      `${what} ${path} is not valid YAML or JSON: ${(e as Error).message}`,
      { cause: e },
    );
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    // Misspelt keys first, with their did-you-mean; then whatever else is wrong.
    const unknown = unknownKeys(schema, parsed.error);
    const rest = parsed.error.issues.filter((i) => i.code !== "unrecognized_keys");
    const said = [
      ...unknown,
      ...(rest.length > 0 ? [describeIssues(new z.ZodError(rest))] : []),
    ].join("; ");
    throw new ProvaelError("config/invalid", `${what} ${path}: ${said}`, {
      details: { issues: parsed.error.issues },
      hint,
    });
  }
  return parsed.data;
}
