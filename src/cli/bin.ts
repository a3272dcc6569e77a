#!/usr/bin/env node
/**
 * The `provael` executable. `provael version` answers from a module that loads almost nothing;
 * every other command loads the full command line (main.ts), which is where the work is.
 */
const args = process.argv.slice(2);
if (args[0] === "version" && args.slice(1).every((a) => a === "--json")) {
  const { printVersion } = await import("./version.js");
  printVersion(args.includes("--json"));
} else {
  await import("./main.js");
}
