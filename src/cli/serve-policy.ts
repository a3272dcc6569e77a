/**
 * `provael serve-policy`: serve a built-in policy over openpi, OpenVLA's REST route or the
 * vla-evaluation-harness protocol. Also the served-policy flags `provael attack` takes.
 */
import type { Command } from "commander";
import { choice, integer } from "../config/parse.js";
import { ProvaelError } from "../core/errors.js";
import { policies } from "../policies/index.js";
import {
  DEFAULT_LAYOUT,
  SERVE_PROTOCOLS,
  type ServeProtocol,
  startPolicyServer,
} from "../policies/served/server/index.js";

interface ServeFlags {
  policy: string;
  protocol: ServeProtocol;
  host: string;
  port: number;
  layout?: string;
  imageSize?: [number, number] | null;
  policyPath?: string;
  maxFrame?: number;
  latencyMs?: number;
  maxBuffered?: number;
  frameDeadline?: number;
  json?: boolean;
}

/** `128` or `128x96` (width x height), or `native` to pass images through at the size sent. */
function imageSize(raw: string): [number, number] | null {
  if (raw === "native") return null;
  const m = /^(\d+)(?:x(\d+))?$/.exec(raw.trim());
  const w = Number(m?.[1]);
  const h = Number(m?.[2] ?? m?.[1]);
  if (!m || !(w > 0) || !(h > 0)) {
    throw new ProvaelError(
      "config/invalid",
      `--image-size must be N, WxH or native, got '${raw}'`,
      {
        hint: "the tabletop suite's cameras are 128x128",
      },
    );
  }
  return [w, h];
}

export function registerServePolicy(program: Command): void {
  program
    .command("serve-policy")
    .requiredOption("--policy <id>", "policy to serve (provael list-policies)")
    .option(
      "--protocol <name>",
      `wire protocol: ${SERVE_PROTOCOLS.join(", ")}`,
      choice("--protocol", SERVE_PROTOCOLS),
      "openpi",
    )
    .option("--host <address>", "address to bind (loopback by default)", "127.0.0.1")
    .option("--port <n>", "port to bind (0 picks a free one)", integer("--port", { min: 0 }), 8000)
    .option(
      "--layout <name|file>",
      "key layout: libero, droid, aloha, openvla, vla-eval or a mapping file (default per protocol)",
    )
    .option(
      "--image-size <N|WxH|native>",
      "image size the policy reads; requests are resized back to it (default 128)",
      imageSize,
    )
    .option("--policy-path <path>", "weights or model file for the policy")
    .option(
      "--max-frame <bytes>",
      "largest request accepted",
      integer("--max-frame", { min: 1024 }),
    )
    .option(
      "--latency-ms <n>",
      "added time per action request, requests served one at a time (models one accelerator; for benchmarks)",
      integer("--latency-ms", { min: 0 }),
    )
    .option(
      "--max-buffered <bytes>",
      "request bytes held at once across all connections (default: three times --max-frame)",
      integer("--max-buffered", { min: 1024 }),
    )
    .option(
      "--frame-deadline <ms>",
      "how long a request frame or body may take to arrive (default 30000)",
      integer("--frame-deadline", { min: 1 }),
    )
    .option("--json", "print the bound address as JSON")
    .action(async (flags: ServeFlags) => {
      const policy = policies.get(flags.policy);
      const server = await startPolicyServer({
        policy,
        ...(flags.policyPath ? { policyOptions: { path: flags.policyPath } } : {}),
        protocol: flags.protocol,
        host: flags.host,
        port: flags.port,
        layout: flags.layout ?? DEFAULT_LAYOUT[flags.protocol],
        ...(flags.imageSize !== undefined ? { imageSize: flags.imageSize } : {}),
        ...(flags.maxFrame ? { maxFrameBytes: flags.maxFrame } : {}),
        ...(flags.latencyMs ? { latencyMs: flags.latencyMs } : {}),
        ...(flags.maxBuffered ? { maxBufferedBytes: flags.maxBuffered } : {}),
        ...(flags.frameDeadline ? { frameDeadlineMs: flags.frameDeadline } : {}),
      });
      const info = {
        policy: policy.id,
        protocol: server.protocol,
        host: server.host,
        port: server.port,
        url: server.url,
      };
      process.stdout.write(
        flags.json
          ? `${JSON.stringify(info)}\n`
          : `serving '${policy.id}' over ${server.protocol} at ${server.url} (port ${server.port}); Ctrl-C stops\n`,
      );
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
      });
      await server.close();
    });
}

// ---------------------------------------------------------------------------------------------
// Flags `provael attack` takes for served and ONNX policies

export interface ServedFlags {
  apiKey?: string;
  layout?: string;
  ioMap?: string;
  replan?: number;
  timeout?: number;
  connectTimeout?: number;
  retries?: number;
  maxFrame?: number;
  unnormKey?: string;
}

/** Adds the served-policy flags to a command. */
export function addServedPolicyFlags(cmd: Command): Command {
  return (
    cmd
      .option(
        "--api-key <key>",
        "served policies: sends 'Authorization: Api-Key <key>' (prefer PROVAEL_API_KEY: flags are recorded in the manifest)",
      )
      .option(
        "--layout <name|file>",
        "served policies: key layout (libero, droid, aloha, or a mapping file)",
      )
      .option(
        "--io-map <file>",
        "onnx: YAML map from observation fields to model inputs and outputs",
      )
      .option(
        "--replan <k>",
        "served policies: actions executed from each chunk before asking again",
        integer("--replan", { min: 1 }),
      )
      .option(
        "--timeout <ms>",
        "served policies: per-call timeout",
        integer("--timeout", { min: 1 }),
      )
      .option(
        "--connect-timeout <ms>",
        "served policies: connect timeout",
        integer("--connect-timeout", { min: 1 }),
      )
      .option(
        "--retries <n>",
        "served policies: retries on a lost connection or timeout",
        integer("--retries", { min: 0 }),
      )
      // --max-errors is the runner's own flag (abort the run), registered in attack.ts.
      .option(
        "--max-frame <bytes>",
        "served policies: largest reply accepted",
        integer("--max-frame", { min: 1024 }),
      )
      .option("--unnorm-key <key>", "openvla: dataset statistics to un-normalise actions with")
  );
}

/**
 * Splits the flags into what changes behaviour (recorded in the plan, so a resume must match) and
 * everything the policy reads (`PolicyOptions.extra`, secrets and timeouts included).
 */
export function servedPolicyOptions(flags: ServedFlags): {
  plan: Record<string, unknown>;
  extra: Record<string, unknown>;
} {
  const plan: Record<string, unknown> = {};
  if (flags.layout !== undefined) plan.layout = flags.layout;
  if (flags.ioMap !== undefined) plan.ioMap = flags.ioMap;
  if (flags.replan !== undefined) plan.replan = flags.replan;
  if (flags.unnormKey !== undefined) plan.unnormKey = flags.unnormKey;
  const extra: Record<string, unknown> = { ...plan };
  if (flags.apiKey !== undefined) extra.apiKey = flags.apiKey;
  if (flags.timeout !== undefined) extra.timeoutMs = flags.timeout;
  if (flags.connectTimeout !== undefined) extra.connectTimeoutMs = flags.connectTimeout;
  if (flags.retries !== undefined) extra.retries = flags.retries;
  if (flags.maxFrame !== undefined) extra.maxFrameBytes = flags.maxFrame;
  return { plan, extra };
}
