/**
 * `provael bridge`: serve as a vla-eval model server in front of the user's policy, one address
 * per arm, until SIGINT or SIGTERM; then the journal is complete and the report written.
 * `provael vla-eval-benchmark`: play one of our suites as the benchmark side of that protocol.
 */
import { join } from "node:path";
import type { Command } from "commander";
import { resolveAttacks } from "../attacks/index.js";
import { playBenchmark } from "../bridge/benchmark-client.js";
import { BUILTIN_PROFILES, loadProfile } from "../bridge/profile.js";
import { refusalLine } from "../bridge/refusal.js";
import { startBridge } from "../bridge/server.js";
import { ProvaelError } from "../core/errors.js";
import { resolveDefenseParams, resolveDefenses } from "../defenses/index.js";
import { policies } from "../policies/index.js";
import { armsTable, summaryLines } from "../report/text.js";
import { loadCalibrations } from "../runner/calibration.js";
import { suites } from "../suites/index.js";
import { EXIT } from "./exit.js";
import { integer, list } from "./parse.js";
import { addServedPolicyFlags, type ServedFlags, servedPolicyOptions } from "./serve-policy.js";

interface BridgeFlags extends ServedFlags {
  defenses?: string[];
  compareDefenses?: string[];
  defenseParam?: string[];
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
  attackParam?: string[];
  resume?: boolean;
}

/** `arm.key=value` pairs into per-arm parameters (numbers and booleans typed). */
function attackParams(raw: string[] | undefined): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const item of raw ?? []) {
    const m = /^([^.=]+)\.([^=]+)=(.*)$/.exec(item);
    if (!m) {
      throw new ProvaelError(
        "config/invalid",
        `--attack-param must be arm.key=value, got '${item}'`,
      );
    }
    const [, arm, key, value] = m as unknown as [string, string, string, string];
    const v =
      value === "true"
        ? true
        : value === "false"
          ? false
          : Number.isFinite(Number(value)) && value !== ""
            ? Number(value)
            : value;
    out[arm] = { ...(out[arm] ?? {}), [key]: v };
  }
  return out;
}

/** `--defenses` or `--compare-defenses`, and `--defense-param`, checked before the bridge listens. */
function bridgeDefenses(flags: BridgeFlags): {
  defenses?: { ids: string[]; params: Record<string, Record<string, unknown>>; compare: boolean };
} {
  if (flags.defenses && flags.compareDefenses) {
    throw new ProvaelError(
      "config/invalid",
      "--defenses and --compare-defenses exclude each other",
      {
        hint: "--defenses defends every arm; --compare-defenses serves every arm both ways",
      },
    );
  }
  const spec = flags.compareDefenses ?? flags.defenses;
  const raw = flags.defenseParam;
  if (!spec) {
    if ((raw ?? []).length > 0)
      throw new ProvaelError(
        "config/invalid",
        "--defense-param without --defenses or --compare-defenses",
        { hint: "name the defenses the params are for" },
      );
    return {};
  }
  const ids = resolveDefenses(spec);
  const params: Record<string, Record<string, unknown>> = {};
  for (const r of raw ?? []) {
    const m = /^([a-z0-9_.-]+)\.([A-Za-z0-9_]+)=(.*)$/.exec(r);
    if (!m || !ids.includes(m[1] as string)) {
      throw new ProvaelError(
        "config/invalid",
        `--defense-param needs defense.key=value for a defense of this bridge, got '${r}'`,
      );
    }
    const [, id, key, value] = m as unknown as [string, string, string, string];
    let v: unknown = value;
    try {
      v = JSON.parse(value);
    } catch {}
    params[id] = { ...(params[id] ?? {}), [key]: v };
  }
  for (const id of Object.keys(params)) resolveDefenseParams(id, params);
  return { defenses: { ids, params, compare: flags.compareDefenses !== undefined } };
}

export function registerBridge(program: Command): void {
  const cmd = program
    .command("bridge")
    .requiredOption("--policy <id>", "upstream policy: vla-eval, openpi, openvla or a built-in one")
    .option(
      "--policy-url <url>",
      "upstream server address; repeat it (or a comma list) to spread the benchmark's connections over servers of the same policy",
      (v: string, prev: string[] = []) => [...prev, ...list(v)],
    )
    .option("--policy-path <path>", "weights or model file for an in-process policy")
    .requiredOption("--attacks <list>", "arms, comma-separated (provael list-attacks)", list)
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
    .option("--calib <dir>", "calibrations from `provael calibrate` for this policy and profile")
    .option(
      "--max-frame-in <bytes>",
      "largest frame accepted from the benchmark",
      integer("--max-frame-in", { min: 1024 }),
    )
    .option(
      "--attack-param <arm.key=value>",
      "an attack's parameter, repeatable",
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option(
      "--defenses <ids>",
      "defenses applied in every arm, comma-separated (provael list-defenses)",
      list,
    )
    .option(
      "--compare-defenses <ids>",
      "serve every arm undefended at /arms/<arm> and defended at /arms/<arm>+<id>+… (one vla-eval run each)",
      list,
    )
    .option(
      "--defense-param <defense.key=value>",
      "a defense's parameter, repeatable",
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option("--json", "print the addresses as one JSON line")
    .action(async (flags: BridgeFlags) => {
      policies.get(flags.policy);
      const arms = resolveAttacks(flags.attacks);
      const profile = flags.profile === "auto" ? "auto" : loadProfile(flags.profile);
      const served = servedPolicyOptions(flags);
      const extra = { ...served.plan, ...served.extra };
      const bridge = await startBridge({
        policy: flags.policy,
        policyOptions: {
          ...(flags.policyPath ? { path: flags.policyPath } : {}),
          ...(flags.policyUrl?.[0] ? { url: flags.policyUrl[0] } : {}),
          ...(Object.keys(extra).length > 0 ? { extra } : {}),
        },
        ...((flags.policyUrl?.length ?? 0) > 1 ? { policyUrls: flags.policyUrl } : {}),
        planPolicyOptions: {
          ...(flags.policyPath ? { path: flags.policyPath } : {}),
          ...(Object.keys(served.plan).length > 0 ? { extra: served.plan } : {}),
        },
        arms,
        attackParams: attackParams(flags.attackParam),
        ...bridgeDefenses(flags),
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
          `\n${armsTable(result.report)}\n\n${summaryLines(result.report, { dir: result.out }).join("\n")}\n\nwrote ${join(result.out, "report.json")} (${result.reportDigest}), ${result.episodes} episode(s) journalled\n`,
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
