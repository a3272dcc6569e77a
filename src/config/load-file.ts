/** Reading a YAML or JSON configuration file and validating it with zod, with clear errors. */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import type { z } from "zod";
import { ProvaelError } from "../core/errors.js";
import { describeIssues } from "../core/zod-issues.js";

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
    throw new ProvaelError("config/invalid", `${what} ${path}: ${describeIssues(parsed.error)}`, {
      details: { issues: parsed.error.issues },
      hint,
    });
  }
  return parsed.data;
}
