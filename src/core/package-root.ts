import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The package root: two levels above this file both in `src/core/` (tests) and `dist/core/`
 * (the built CLI), so assets resolve the same way in both.
 */
export const PACKAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The tool version from package.json; every report records it. */
export const TOOL_VERSION: string = (
  JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as { version: string }
).version;
