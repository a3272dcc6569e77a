/** `provael version`: kept apart so that printing it loads almost nothing (see bin.ts). */
import type { Command } from "commander";
import { TOOL_VERSION } from "../core/package-root.js";
import { PROTOCOL, REPORT_SCHEMA } from "../core/protocol.js";

export function printVersion(json: boolean): void {
  const info = {
    tool_version: TOOL_VERSION,
    protocol: PROTOCOL,
    report_schema: REPORT_SCHEMA,
    node: process.version,
  };
  process.stdout.write(
    json
      ? `${JSON.stringify(info)}\n`
      : `provael ${TOOL_VERSION} (protocol ${PROTOCOL}, report ${REPORT_SCHEMA}, node ${process.version})\n`,
  );
}

/** `provael version` as a command of the full command line (bin.ts answers it without one). */
export function registerVersion(program: Command): void {
  program
    .command("version")
    .option("--json", "print JSON")
    .action((flags: { json?: boolean }) => printVersion(Boolean(flags.json)));
}
