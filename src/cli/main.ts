#!/usr/bin/env node
/** The `provael` command line: parse, call the library, print. */
import { Command, CommanderError } from "commander";
import { TOOL_VERSION } from "../core/package-root.js";
import { registerAttack } from "./attack.js";
import { registerAttest } from "./attest.js";
import { registerBridge, registerVlaEvalBenchmark } from "./bridge.js";
import { registerCalibrate } from "./calibrate.js";
import { EXIT, reportError } from "./exit.js";
import { registerLeaderboard } from "./leaderboard.js";
import { registerList } from "./list.js";
import { registerMerge } from "./merge.js";
import { registerOfflineStudy } from "./offline-study.js";
import { registerRecord } from "./record.js";
import { registerReport } from "./report.js";
import { registerServePolicy } from "./serve-policy.js";
import { registerTrain } from "./train.js";
import { registerVerdict } from "./verdict.js";
import { printVersion } from "./version.js";
import { registerView } from "./view.js";

export function buildProgram(): Command {
  const program = new Command("provael")
    .description(
      "Red-team Vision-Language-Action robot policies in simulation, with honest statistics",
    )
    .version(TOOL_VERSION, "-V, --version")
    .showSuggestionAfterError(true)
    .exitOverride();
  registerAttack(program);
  registerReport(program);
  registerList(program);
  registerAttest(program);
  registerLeaderboard(program);
  registerCalibrate(program);
  registerVerdict(program);
  registerMerge(program);
  registerServePolicy(program);
  registerRecord(program);
  registerOfflineStudy(program);
  registerTrain(program);
  registerBridge(program);
  registerVlaEvalBenchmark(program);
  registerView(program);
  program
    .command("version")
    .description("print the tool version, protocol and report schema")
    .option("--json", "print JSON")
    .action((flags: { json?: boolean }) => printVersion(Boolean(flags.json)));
  return program;
}

async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  const json = argv.includes("--json");
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === "number" ? process.exitCode : EXIT.ok;
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and version output are not errors; everything else commander rejects is bad input.
      return e.exitCode === 0 ||
        e.code === "commander.helpDisplayed" ||
        e.code === "commander.version"
        ? EXIT.ok
        : EXIT.usage;
    }
    // Commander wraps errors thrown by option parsers; unwrap to print ours.
    return reportError(e, json);
  }
}

// A reader that stops early (`provael attack --help | head`) closes the pipe: that is the
// reader's choice, so the command ends quietly instead of with a stack trace, with the status
// a Unix tool killed by SIGPIPE has (128 + 13). A run still playing stops there; its finished
// episodes are in the journal and `provael attack --resume` goes on from them.
process.stdout.on("error", (e: NodeJS.ErrnoException) => {
  if (e.code !== "EPIPE") throw e;
  process.exit(EXIT.brokenPipe);
});
// Diagnostics (progress, the first signal's `stopping` line, warnings) for a reader that went
// away are dropped and the work goes on: a caller that gives up sends SIGTERM and closes its
// pipes at once (spawnSync's timeout; Ctrl-C on `provael attack ... | tee log` ends tee too), and
// the stop that signal asks for (finish what is in flight, write what was kept) must not end in an
// uncaught EPIPE half-way through the outputs (exit 7 once tiny-vla's WASM backend is loaded:
// its handlers rethrow). Standard output still decides: the results written there meet EPIPE and
// exit 141, as above.
process.stderr.on("error", (e: NodeJS.ErrnoException) => {
  if (e.code !== "EPIPE") throw e;
});

main(process.argv).then((code) => {
  process.exitCode = code;
});
