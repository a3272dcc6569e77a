/**
 * `provael bridge`: serve as a vla-eval model server in front of the user's policy, one address
 * per arm, until SIGINT or SIGTERM; then the journal is complete and the report written.
 * `provael vla-eval-benchmark`: play one of our suites as the benchmark side of that protocol.
 */
import { join } from "node:path";
import type { Command } from "commander";
import { playBenchmark } from "../bridge/benchmark-client.js";
import { BUILTIN_PROFILES, loadProfile } from "../bridge/profile.js";
import { refusalLine } from "../bridge/refusal.js";
import { startBridge } from "../bridge/server.js";
import { integer, list } from "../config/parse.js";
import { addPlanFlags, type FlagValues, planFromFlags } from "../config/plan-flags.js";
import { ProvaelError } from "../core/errors.js";
import { policies } from "../policies/index.js";
import { armsAndSplits, summaryLines } from "../report/text.js";
import { RUN_FILES } from "../rundir/files.js";
import { loadCalibrations } from "../runner/calibration.js";
import { suites } from "../suites/index.js";
import { EXIT } from "./exit.js";
import { addServedPolicyFlags, type ServedFlags, servedPolicyOptions } from "./serve-policy.js";

interface BridgeFlags extends ServedFlags {
  defenses?: string[];
  compareDefenses?: string[];
  defenseParam?: Record<string, Record<string, unknown>>;
  policy: string;
  policyUrl?: string[];
  policyPath?: string;
  attacks: string[];
  profile: string;
  out: string;
  host: string;
  port: number;
  calib?: string;
  maxFrameIn?: number;
  json?: boolean;
  attackParam?: Record<string, Record<string, unknown>>;
  resume?: boolean;
}

export function registerBridge(program: Command): void {
  const cmd = program.command("bridge");
  // The plan's flags, from the one flag table (src/config/plan-flags.ts).
  addPlanFlags(cmd, "bridge")
    .option(
      "--profile <auto|name|file>",
      `benchmark profile: auto (chosen from the benchmark's HELLO), ${BUILTIN_PROFILES.join(", ")} (provael list-profiles), or a profile file`,
      "auto",
    )
    .requiredOption("--out <dir>", "run directory (new or empty; with --resume, a bridged run)")
    .option(
      "--resume",
      "continue the bridged run in --out (same flags): its episodes are kept and counted, the report covers all",
    )
    .option("--host <address>", "address to bind (loopback by default)", "127.0.0.1")
    .option("--port <n>", "port to bind (0 picks a free one)", integer("--port", { min: 0 }), 9000)
    .option(
      "--max-frame-in <bytes>",
      "largest frame accepted from the benchmark",
      integer("--max-frame-in", { min: 1024 }),
    )
    .option("--json", "print the addresses as one JSON line")
    .action(async (flags: BridgeFlags) => {
      policies.get(flags.policy);
      const profile = flags.profile === "auto" ? "auto" : loadProfile(flags.profile);
      const served = servedPolicyOptions(flags);
      // The plan's flags, parsed and checked as `attack` does (one table); the bridge completes
      // the plan (tasks, seeds, calibration) from the episodes the benchmark plays.
      const plan = planFromFlags("bridge", flags as unknown as FlagValues, {
        suiteTasks: [],
        calibrations: {},
        servedPlan: served.plan,
      });
      const recorded = plan.policy_options ?? {};
      const upstream = flags.policyUrl?.[0];
      const bridge = await startBridge({
        policy: flags.policy,
        policyOptions: {
          ...recorded,
          ...(upstream ? { url: upstream } : {}),
          extra: { ...((recorded.extra ?? {}) as Record<string, unknown>), ...served.extra },
        },
        ...((flags.policyUrl?.length ?? 0) > 1 ? { policyUrls: flags.policyUrl } : {}),
        planPolicyOptions: recorded,
        arms: plan.arms ?? [],
        attackParams: plan.attack_params ?? {},
        ...(plan.defenses ? { defenses: plan.defenses } : {}),
        plan,
        profile,
        ...(flags.calib ? { calibrations: loadCalibrations(flags.calib) } : {}),
        out: flags.out,
        host: flags.host,
        port: flags.port,
        ...(flags.maxFrameIn ? { maxFrameBytes: flags.maxFrameIn } : {}),
        commandLine: process.argv.slice(1),
        ...(flags.resume ? { resume: true } : {}),
        // Every refusal on this terminal too, with the words the benchmark's log shows.
        onEvent: (e) => {
          if (e.type === "refusal") process.stderr.write(`provael: ${refusalLine(e.refusal)}\n`);
        },
      });
      if (flags.json) {
        process.stdout.write(
          `${JSON.stringify({ url: bridge.url, port: bridge.port, arms: bridge.armUrls, not_applicable: bridge.notApplicable })}\n`,
        );
      } else {
        process.stdout.write(
          `bridge for '${flags.policy}' on ${profile === "auto" ? "the profile the benchmark's HELLO names (--profile auto)" : `profile '${profile.id}'`} at ${bridge.url}; run each arm over the same config:\n`,
        );
        for (const [route, url] of Object.entries(bridge.armUrls)) {
          // A defended twin's address is `<arm>+<defense>…`; its N/A reason is the arm's.
          const na = bridge.notApplicable[route.split("+")[0] as string];
          process.stdout.write(
            `  vla-eval run --config C.yaml --server-url ${url}${na ? `   # N/A: ${na}` : ""}\n`,
          );
        }
        process.stdout.write("SIGINT or SIGTERM stops it and writes the report\n");
      }
      await new Promise<void>((resolve) => {
        process.once("SIGINT", resolve);
        process.once("SIGTERM", resolve);
      });
      const result = await bridge.close();
      if (flags.json) {
        process.stdout.write(
          `${JSON.stringify({ out: result.out, report_digest: result.reportDigest, episodes: result.episodes })}\n`,
        );
      } else {
        process.stdout.write(
          `\n${armsAndSplits(result.report)}\n\n${summaryLines(result.report, { dir: result.out }).join("\n")}\n\nwrote ${join(result.out, RUN_FILES.report)} (${result.reportDigest}), ${result.episodes} episode(s) journalled\n`,
        );
      }
      // The report covers the good episodes; errored ones are listed in it and make the run
      // incomplete (replaying their cells, with --resume, completes it).
      const errored = result.report.episodes.filter((e) => e.error !== null);
      if (errored.length > 0) {
        process.stderr.write(
          `provael: incomplete: ${errored.length} episode(s) errored and are not scored (report.json lists them):\n${errored
            .slice(0, 10)
            .map(
              (e) => `  ${e.arm} ${e.task} seed ${e.seed}: ${e.error?.code}: ${e.error?.message}`,
            )
            .join("\n")}${errored.length > 10 ? "\n  …" : ""}\n`,
        );
        process.exitCode = EXIT.incomplete;
      }
    });
  addServedPolicyFlags(cmd);
}

interface BenchFlags {
  suite: string;
  serverUrl: string;
  tasks?: string[];
  seeds: number;
  seed: number;
  horizon?: number;
  scenePin: number;
  shardId?: number;
  numShards?: number;
  json?: boolean;
}

export function registerVlaEvalBenchmark(program: Command): void {
  program
    .command("vla-eval-benchmark")
    .option("--suite <id>", "suite to play", "tabletop")
    .requiredOption("--server-url <url>", "model server (a bridge arm's ws://HOST:PORT/arms/<arm>)")
    .option("--tasks <list>", "tasks, comma-separated (default: all)", list)
    .option("--seeds <n>", "episodes per task", integer("--seeds", { min: 1 }), 1)
    .option("--seed <n>", "first episode index", integer("--seed", { min: 0 }), 0)
    .option("--horizon <n>", "steps per episode", integer("--horizon", { min: 1 }))
    .option("--scene-pin <n>", "scene offset", integer("--scene-pin", { min: 0 }), 0)
    .option(
      "--shard-id <k>",
      "play the k-th round-robin shard of the (task, episode) items (with --num-shards, as vla-eval)",
      integer("--shard-id", { min: 0 }),
    )
    .option("--num-shards <n>", "shards in all", integer("--num-shards", { min: 1 }))
    .option("--json", "print the episodes as JSON")
    .action(async (flags: BenchFlags) => {
      const suite = suites.get(flags.suite);
      if ((flags.shardId === undefined) !== (flags.numShards === undefined))
        throw new ProvaelError("config/invalid", "--shard-id and --num-shards go together");
      if (flags.shardId !== undefined && flags.shardId >= (flags.numShards as number))
        throw new ProvaelError("config/invalid", "--shard-id must be below --num-shards");
      const result = await playBenchmark({
        suite: flags.suite,
        serverUrl: flags.serverUrl,
        tasks: flags.tasks ?? suite.tasks().map((t) => t.id),
        episodes: Array.from({ length: flags.seeds }, (_, i) => flags.seed + i),
        ...(flags.horizon ? { horizon: flags.horizon } : {}),
        scenePin: flags.scenePin,
        ...(flags.shardId !== undefined
          ? { shard: { id: flags.shardId, count: flags.numShards as number } }
          : {}),
      });
      if (flags.json) process.stdout.write(`${JSON.stringify(result.episodes)}\n`);
      else
        for (const e of result.episodes)
          process.stdout.write(
            `${e.task} #${e.episode_idx}: ${e.error ? `error: ${e.error}` : `${e.success ? "success" : "failure"} in ${e.steps} steps`}\n`,
          );
      if (result.episodes.some((e) => e.error)) process.exitCode = 4;
    });
}
