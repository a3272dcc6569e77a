/**
 * Every top-level command: its name, how `provael --help` shows it, what it does, and the module
 * that registers it. The table is where a command's one-line description is declared; the module
 * is imported only when the command runs (or its own help is asked for), so `provael --help` and
 * `provael list-attacks` load neither the registries nor the run machinery they do not use.
 */
import { Command } from "commander";
import { TOOL_VERSION } from "../core/package-root.js";

type Register = (program: Command) => void;

export interface CommandEntry {
  name: string;
  /** As `provael --help` lists it: the name, `[options]` and the arguments. */
  term: string;
  description: string;
  load: () => Promise<Register>;
}

export const COMMANDS: readonly CommandEntry[] = [
  {
    name: "attack",
    term: "attack [options]",
    description: "play tasks × arms × seeds episodes and write a run directory with report.json",
    load: async () => (await import("./attack.js")).registerAttack,
  },
  {
    name: "report",
    term: "report [options]",
    description: "render a finished run's report, SARIF, compliance map or HTML page",
    load: async () => (await import("./report.js")).registerReport,
  },
  {
    name: "results",
    term: "results [options] <dir>",
    description:
      "a finished run's results as Markdown tables (arms, matched controls, budgets, pairs), or a sweep summary",
    load: async () => (await import("./results.js")).registerResults,
  },
  {
    name: "compare",
    term: "compare [options] <before> <after>",
    description:
      "two sweeps of one plan side by side (runs or sweep summaries): what moved, paired cell by cell where both have cells",
    load: async () => (await import("./compare.js")).registerCompare,
  },
  {
    name: "list-attacks",
    term: "list-attacks [options] [ids...]",
    description: "every registered attack with family, role, EAI risk, access and requirements",
    load: async () => (await import("./list.js")).registerListAttacks,
  },
  {
    name: "list-defenses",
    term: "list-defenses [options]",
    description: "every registered defense with its kind, requirements and default params",
    load: async () => (await import("./list.js")).registerListDefenses,
  },
  {
    name: "list-policies",
    term: "list-policies [options]",
    description: "every registered policy with its capabilities",
    load: async () => (await import("./list.js")).registerListPolicies,
  },
  {
    name: "list-suites",
    term: "list-suites [options]",
    description: "every registered suite with its tasks",
    load: async () => (await import("./list.js")).registerListSuites,
  },
  {
    name: "list-profiles",
    term: "list-profiles [options] [ids...]",
    description:
      "benchmark profiles for `provael bridge --profile`: pose, cameras, what each judges",
    load: async () => (await import("./list.js")).registerListProfiles,
  },
  {
    name: "list-recipes",
    term: "list-recipes [options]",
    description: "named base configurations for `provael attack --recipe`",
    load: async () => (await import("./list.js")).registerListRecipes,
  },
  {
    name: "keygen",
    term: "keygen [options]",
    description:
      "create an Ed25519 key pair: private.pem (PKCS#8, mode 0600) and public.pem (SPKI)",
    load: async () => (await import("./attest.js")).registerKeygen,
  },
  {
    name: "attest",
    term: "attest [options]",
    description: "sign a run's report.json into an in-toto statement in a DSSE envelope",
    load: async () => (await import("./attest.js")).registerAttestCommand,
  },
  {
    name: "verify",
    term: "verify [options]",
    description: "verify an attestation's signature, key and, with --report, the report it names",
    load: async () => (await import("./attest.js")).registerVerify,
  },
  {
    name: "leaderboard",
    term: "leaderboard",
    description: "build or verify a leaderboard of runs",
    load: async () => (await import("./leaderboard.js")).registerLeaderboard,
  },
  {
    name: "calibrate",
    term: "calibrate [options]",
    description:
      "fit per-task keep-out zones from benign rollouts at a target false-positive rate (fit, threshold and evaluate scenes kept apart)",
    load: async () => (await import("./calibrate.js")).registerCalibrate,
  },
  {
    name: "verdict",
    term: "verdict [options]",
    description:
      "decide pass, fail or incomplete for a finished run under an acceptance protocol (exit 0, 1 or 3)",
    load: async () => (await import("./verdict.js")).registerVerdict,
  },
  {
    name: "merge",
    term: "merge [options]",
    description:
      "join finished shard directories of one plan into the report an unsharded run would write",
    load: async () => (await import("./merge.js")).registerMerge,
  },
  {
    name: "serve-policy",
    term: "serve-policy [options]",
    description:
      "serve a built-in policy over openpi, openvla (REST) or vla-eval for remote harnesses",
    load: async () => (await import("./serve-policy.js")).registerServePolicy,
  },
  {
    name: "record",
    term: "record [options]",
    description:
      "record demonstrations (successful episodes only) as a LeRobotDataset v3.0 directory",
    load: async () => (await import("./record.js")).registerRecord,
  },
  {
    name: "offline-study",
    term: "offline-study",
    description:
      "open-loop study on a recorded LeRobotDataset v3.0: pre-register a plan, then run it",
    load: async () => (await import("./offline-study.js")).registerOfflineStudy,
  },
  {
    name: "train",
    term: "train [options] <model>",
    description: "train a learned policy from recorded demonstrations (only: tiny-vla)",
    load: async () => (await import("./train.js")).registerTrain,
  },
  {
    name: "bridge",
    term: "bridge [options]",
    description:
      "a vla-eval model server that applies each arm to what flows to your policy (one address per arm) and writes a run directory",
    load: async () => (await import("./bridge.js")).registerBridge,
  },
  {
    name: "vla-eval-benchmark",
    term: "vla-eval-benchmark [options]",
    description: "play one of our suites as the benchmark side of the vla-eval protocol",
    load: async () => (await import("./bridge.js")).registerVlaEvalBenchmark,
  },
  {
    name: "playground",
    term: "playground [options]",
    description:
      "write the playground: a static site that plays attack in a browser (tabletop × tiny-vla in Web Workers), outcomes as the CLI's",
    load: async () => (await import("./playground.js")).registerPlayground,
  },
  {
    name: "view",
    term: "view [options] [dirs...]",
    description:
      "browse run directories in a local web app: runs, arms, filters, each attacked episode beside its benign twin, comparisons (or --bundle a static site)",
    load: async () => (await import("./view.js")).registerView,
  },
  {
    name: "video",
    term: "video [options]",
    description:
      "render an episode (and its benign twin) as a clip with labels, step counter and the predicate's moment",
    load: async () => (await import("./view.js")).registerVideo,
  },
  {
    name: "version",
    term: "version [options]",
    description: "print the tool version, protocol and report schema",
    load: async () => (await import("./version.js")).registerVersion,
  },
];

/** Registers one command from its entry, with the entry's description. */
export async function registerCommand(program: Command, entry: CommandEntry): Promise<Command> {
  (await entry.load())(program);
  const cmd = program.commands.find((c) => c.name() === entry.name);
  if (!cmd) throw new Error(`${entry.name}'s module did not register it`);
  return cmd.description(entry.description);
}

export function baseProgram(): Command {
  return new Command("provael")
    .description(
      "Red-team Vision-Language-Action robot policies in simulation, with honest statistics",
    )
    .version(TOOL_VERSION, "-V, --version")
    .showSuggestionAfterError(true)
    .exitOverride();
}

/** Every command, loaded: for tests and for generating the docs' command summary. */
export async function buildProgram(): Promise<Command> {
  const program = baseProgram();
  for (const entry of COMMANDS) await registerCommand(program, entry);
  return program;
}

/**
 * The README's command summary, from the commands themselves: each command as `--help` lists
 * it, then `attack`'s options with their defaults. A test keeps the README's copy current.
 */
export async function commandSummary(): Promise<string> {
  const program = await buildProgram();
  const width = Math.max(...COMMANDS.map((c) => c.term.length));
  const lines = COMMANDS.map((c) => `provael ${c.term.padEnd(width)}  ${c.description}`);
  const attack = program.commands.find((c) => c.name() === "attack") as Command;
  const options = attack.options.filter((o) => !o.hidden);
  const flagsWidth = Math.max(...options.map((o) => o.flags.length));
  lines.push("", "provael attack options (defaults in brackets):");
  const shown = (v: unknown): string =>
    Array.isArray(v) ? v.join(",") : typeof v === "object" ? "" : String(v);
  for (const o of options) {
    const value = o.negate || o.defaultValue === undefined ? "" : shown(o.defaultValue);
    lines.push(`  ${o.flags.padEnd(flagsWidth)}  ${o.description}${value ? ` [${value}]` : ""}`);
  }
  return lines.join("\n");
}
