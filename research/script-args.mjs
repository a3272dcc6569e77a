// Option parsing shared by the measurement scripts: `--help` prints the usage, and an unknown or
// malformed option says what was wrong and what is accepted (exit 2) instead of a stack trace.
import { parseArgs } from "node:util";

/** Every script reads the compiled library, said once here rather than in each usage. */
const AFTER_BUILD = "\n(run `npm run build` first: the scripts read dist/)";

/**
 * A script's options as `node:util`'s `parseArgs` takes them.
 * @typedef {NonNullable<import("node:util").ParseArgsConfig["options"]>} ScriptOptions
 */

/**
 * The values `parseArgs` gives for options `O`: a string option is a string (an array when
 * `multiple`), a boolean a boolean, and an option without a default may be undefined.
 * @template {ScriptOptions} O
 * @typedef {ReturnType<typeof import("node:util").parseArgs<{ options: O }>>["values"]} ScriptValues
 */

/**
 * @template {ScriptOptions} O
 * @param {string} name the script's name, as the first word of an error
 * @param {string} usage what `--help` prints
 * @param {O} options
 * @returns {ScriptValues<O>}
 */
export function parseScriptArgs(name, usage, options) {
  return parseScriptCommand(name, usage, options, false).values;
}

/**
 * As `parseScriptArgs`, for a script that also takes positional arguments (a mode, a run
 * directory): its options and, in order, its positionals.
 * @param {string} name the script's name, as the first word of an error
 * @param {string} usage what `--help` and a usage error print
 * @template {ScriptOptions} O
 * @param {O} options
 * @param {boolean} [allowPositionals]
 * @returns {{ values: ScriptValues<O>, positionals: string[] }}
 */
export function parseScriptCommand(name, usage, options, allowPositionals = true) {
  /** @type {import("node:util").ParseArgsConfig} */
  const config = {
    options: { ...options, help: { type: "boolean", default: false } },
    allowPositionals,
  };
  let parsed;
  try {
    parsed = parseArgs(config);
  } catch (e) {
    usageError(name, usage, e instanceof Error ? e.message : String(e));
  }
  if (parsed.values.help) {
    console.log(`${usage}${AFTER_BUILD}`);
    process.exit(0);
  }
  // parseArgs types its values precisely only for a literal config; these are the values of
  // `options`, whose types `ScriptValues` derives from the same config.
  const values = /** @type {ScriptValues<O>} */ (parsed.values);
  return { values, positionals: parsed.positionals };
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

/**
 * A `--scenes FROM:TO` range (TO excluded), or a usage error: a range that is malformed or empty
 * would play nothing and print empty tables.
 * @param {string} name the script's name, as the first word of an error
 * @param {string} usage what a usage error prints
 * @param {string} text the option's value
 * @returns {[number, number]}
 */
export function sceneRange(name, usage, text) {
  const m = /^(\d+):(\d+)$/.exec(text);
  const [from, to] = [Number(m?.[1]), Number(m?.[2])];
  if (!m || !(from < to))
    usageError(name, usage, `--scenes must be FROM:TO with FROM < TO, got '${text}'`);
  return [from, to];
}
