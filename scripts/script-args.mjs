// Option parsing shared by the measurement scripts: `--help` prints the usage, and an unknown or
// malformed option says what was wrong and what is accepted (exit 2) instead of a stack trace.
import { parseArgs } from "node:util";

/** Every script reads the compiled library, said once here rather than in each usage. */
const AFTER_BUILD = "\n(run `npm run build` first: the scripts read dist/)";

/**
 * @param {string} name the script's name, as the first word of an error
 * @param {string} usage what `--help` prints
 * @param {import("node:util").ParseArgsConfig["options"]} options
 */
export function parseScriptArgs(name, usage, options) {
  let parsed;
  try {
    parsed = parseArgs({ options: { ...options, help: { type: "boolean", default: false } } });
  } catch (e) {
    console.error(`${name}: ${e instanceof Error ? e.message : String(e)}\n${usage}${AFTER_BUILD}`);
    process.exit(2);
  }
  if (parsed.values.help) {
    console.log(`${usage}${AFTER_BUILD}`);
    process.exit(0);
  }
  return parsed.values;
}

/**
 * Says what went wrong the way the CLI does (the message, then the error's hint when it has one)
 * and exits 2.
 * @param {string} name the script's name, as the first word of the error
 * @param {unknown} e what was thrown
 * @returns {never}
 */
export function exitWithError(name, e) {
  const hint = e && typeof e === "object" && "hint" in e && e.hint ? `\n  hint: ${e.hint}` : "";
  console.error(`${name}: ${e instanceof Error ? e.message : String(e)}${hint}`);
  process.exit(2);
}
