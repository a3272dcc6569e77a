#!/usr/bin/env node
/**
 * The `provael` command line: parse, call the library, print. Only the command being run is
 * loaded (commands.ts); `provael --help` and an unknown command see every command's name and
 * description without loading any of them.
 */
import { type Command, CommanderError, Help } from "commander";
import { baseProgram, COMMANDS, type CommandEntry, registerCommand } from "./commands.js";
import { EXIT, reportError } from "./exit.js";

/** The command `argv` runs (`provael help X` asks for X's help), if it names one. */
function commandOf(argv: string[]): CommandEntry | undefined {
  const args = argv.slice(2);
  const name = args[0] === "help" ? args[1] : args[0];
  return COMMANDS.find((c) => c.name === name);
}

/**
 * The program for `argv`: the named command loaded, or (for `--help`, no command or a
 * misspelt one) every command as a name and a description, which is all the help and the
 * did-you-mean suggestion read.
 */
async function programFor(argv: string[]): Promise<Command> {
  const program = baseProgram();
  const entry = commandOf(argv);
  if (entry) {
    await registerCommand(program, entry);
    return program;
  }
  const terms = new Map(COMMANDS.map((c) => [c.name, c.term]));
  const help = new Help();
  program.configureHelp({
    subcommandTerm: (cmd) => terms.get(cmd.name()) ?? help.subcommandTerm(cmd),
  });
  for (const c of COMMANDS) program.command(c.name).description(c.description);
  return program;
}

async function main(argv: string[]): Promise<number> {
  const json = argv.includes("--json");
  try {
    const program = await programFor(argv);
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
