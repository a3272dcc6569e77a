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
  return parseScriptCommand(name, usage, options, false).values;
}

/**
 * As `parseScriptArgs`, for a script that also takes positional arguments (a mode, a run
 * directory): its options and, in order, its positionals.
 * @param {string} name the script's name, as the first word of an error
 * @param {string} usage what `--help` and a usage error print
 * @param {import("node:util").ParseArgsConfig["options"]} options
 * @param {boolean} [allowPositionals]
 */
export function parseScriptCommand(name, usage, options, allowPositionals = true) {
  let parsed;
  try {
    parsed = parseArgs({
      options: { ...options, help: { type: "boolean", default: false } },
      allowPositionals,
    });
  } catch (e) {
    usageError(name, usage, e instanceof Error ? e.message : String(e));
  }
  if (parsed.values.help) {
    console.log(`${usage}${AFTER_BUILD}`);
    process.exit(0);
  }
  return { values: parsed.values, positionals: parsed.positionals };
}

/**
 * Says what was wrong with the command line, then the usage, and exits 2.
 * @param {string} name
 * @param {string} usage
 * @param {string} message
 * @returns {never}
 */
export function usageError(name, usage, message) {
  console.error(`${name}: ${message}\n${usage}${AFTER_BUILD}`);
  process.exit(2);
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
