/**
 * `provael serve-policy`'s library side: serve an in-process policy over openpi, OpenVLA's REST
 * route or the vla-evaluation-harness protocol.
 *
 * @example
 *   const server = await startPolicyServer({ policy: stubPolicy, protocol: "openpi", host: "127.0.0.1", port: 0 });
 *   console.log(server.url); // ws://127.0.0.1:41234
 *   await server.close();
 */
import type { Clock } from "../../../core/clock.js";
import type { Policy, PolicyOptions } from "../../../core/types.js";
import type { DecodeLimits } from "../codec/limits.js";
import { resolveLayout } from "../layouts.js";
import { PolicyHost } from "./host.js";
import type { RunningServer } from "./http.js";
import { startOpenpiServer } from "./openpi-server.js";
import { startOpenvlaServer } from "./openvla-server.js";
import { startVlaEvalServer } from "./vla-eval-server.js";

export const SERVE_PROTOCOLS = ["openpi", "openvla", "vla-eval"] as const;
export type ServeProtocol = (typeof SERVE_PROTOCOLS)[number];

/** The layout each protocol uses unless told otherwise. */
export const DEFAULT_LAYOUT: Record<ServeProtocol, string> = {
  openpi: "libero",
  openvla: "openvla",
  "vla-eval": "vla-eval",
};

export interface ServeOptions {
  policy: Policy;
  policyOptions?: PolicyOptions;
  protocol: ServeProtocol;
  host: string;
  port: number;
  /** Layout preset or mapping file; default per protocol. */
  layout?: string;
  /** [width, height] the policy reads (images resized back to it); default 128x128. */
  imageSize?: [number, number] | null;
  maxFrameBytes?: number;
  /** Request bytes held at once across all connections; default three frames. */
  maxBufferedBytes?: number;
  /** How long a frame or body may take to arrive (ms); default 30 s. */
  frameDeadlineMs?: number;
  /** Bounds on what decoding one request may build (codec/limits.ts). */
  decodeLimits?: Partial<DecodeLimits>;
  clock?: Clock;
  /** Added time per action request, one request at a time (see HostOptions.latencyMs). */
  latencyMs?: number;
}

export type { RunningServer };

export async function startPolicyServer(o: ServeOptions): Promise<RunningServer> {
  const host = new PolicyHost({
    policy: o.policy,
    ...(o.policyOptions ? { policyOptions: o.policyOptions } : {}),
    layout: resolveLayout(o.layout ?? DEFAULT_LAYOUT[o.protocol]),
    imageSize: o.imageSize === undefined ? [128, 128] : o.imageSize,
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.maxFrameBytes ? { maxFrameBytes: o.maxFrameBytes } : {}),
    ...(o.maxBufferedBytes ? { maxBufferedBytes: o.maxBufferedBytes } : {}),
    ...(o.frameDeadlineMs ? { frameDeadlineMs: o.frameDeadlineMs } : {}),
    ...(o.decodeLimits ? { decodeLimits: o.decodeLimits } : {}),
    ...(o.latencyMs ? { latencyMs: o.latencyMs } : {}),
  });
  await host.warm();
  const at = { host: o.host, port: o.port };
  const server =
    o.protocol === "openpi"
      ? await startOpenpiServer(host, at)
      : o.protocol === "openvla"
        ? await startOpenvlaServer(host, at)
        : await startVlaEvalServer(host, at);
  return {
    ...server,
    async close() {
      await server.close();
      await host.close();
    },
  };
}
