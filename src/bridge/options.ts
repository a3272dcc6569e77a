/**
 * What `provael bridge` is started with and what it tells its caller: the options, the events
 * (journalled episodes, refusals) and the running bridge's handle (src/bridge/server.ts).
 */
import type { Clock } from "../core/clock.js";
import type { EpisodeRecord } from "../core/episode.js";
import type { PlanSpec } from "../core/plan.js";
import type { PolicyOptions } from "../core/types.js";
import type { LoadedCalibration } from "../kernel/index.js";
import type { BenchmarkProfile } from "./profile.js";
import type { Refusal } from "./refusal.js";
import type { BridgeRunResult } from "./rundir.js";

export const ARM_PATH = "/arms/";

export interface BridgeOptions {
  /** Upstream policy id (`vla-eval`, `openpi`, `openvla`, or an in-process policy). */
  policy: string;
  /** Everything the upstream client reads (address, layout, timeouts, secrets). */
  policyOptions: PolicyOptions;
  /**
   * Several upstream servers of the same policy (`--policy-url` repeated): benchmark
   * connections spread over them, least loaded first (upstream.ts). `policyOptions.url` is the
   * first; absent: that one alone.
   */
  policyUrls?: string[];
  /** The behaviour-changing part of the policy options, recorded in the journal's plan. */
  planPolicyOptions?: Record<string, unknown>;
  /** The plan's fields the command's flags set (the flag table); the bridge completes the rest. */
  plan?: Partial<PlanSpec>;
  arms: string[];
  attackParams?: Record<string, Record<string, unknown>>;
  /**
   * Defenses (ids in loop order) and their params; absent: none. Applied in every arm, or with
   * `compare` each arm is served twice: undefended at `/arms/<arm>` and defended at
   * `/arms/<arm>+<id>+<id>…` (the chain in loop order), as `provael attack --compare-defenses`.
   */
  defenses?: { ids: string[]; params: Record<string, Record<string, unknown>>; compare?: boolean };
  /**
   * The benchmark's profile, or `auto`: chosen from the first accepted HELLO's `benchmark`
   * import string (a resumed run keeps the profile its journal was written with).
   */
  profile: BenchmarkProfile | "auto";
  calibrations?: Record<string, LoadedCalibration>;
  out: string;
  host: string;
  port: number;
  /** Largest frame accepted from a benchmark (images travel in it). */
  maxFrameBytes?: number;
  /** Request bytes held at once across all connections; default three frames (intake.ts). */
  maxBufferedBytes?: number;
  /** How long a frame may take to arrive (ms); default 30 s (intake.ts). */
  frameDeadlineMs?: number;
  clock?: Clock;
  commandLine?: string[];
  /** Continue the bridged run in `out` (same plan, profile and weights) rather than refuse it. */
  resume?: boolean;
  /**
   * Told of every journalled episode and every refusal as it happens (a caller's progress
   * display and terminal lines); it must not throw.
   */
  onEvent?: (event: BridgeEvent) => void;
  /**
   * Repeats counted per (task, arm, seed): an episode that would be one more is answered with
   * an ERROR and never journalled (a relaunched benchmark replays what already finished).
   * Absent: every episode is a new repeat.
   */
  repeats?: number;
}

/** What the bridge tells its caller as the run goes. */
export type BridgeEvent =
  /** An episode was journalled (errored ones included: `record.error` says why). */
  | { type: "episode"; route: string; record: EpisodeRecord }
  /** The bridge answered a benchmark with ERROR (or refused its address): recorded too. */
  | { type: "refusal"; refusal: Refusal };

export interface RunningBridge {
  host: string;
  port: number;
  url: string;
  /**
   * Per route (the arm, or with compared defenses also `<arm>+<defense>…`), the address a
   * benchmark passes as `--server-url`.
   */
  armUrls: Record<string, string>;
  /** Arms whose requirements the upstream or the benchmark cannot meet (recorded as N/A). */
  notApplicable: Record<string, string>;
  /** Episodes journalled so far. */
  finished(): number;
  /** Episodes refused as replays of finished repeats (`repeats`). */
  dropped(): number;
  /** Stops: open episodes are recorded as errors, the journal closed, the report written. */
  close(): Promise<BridgeRunResult>;
}

/** The address of an arm's defended twin when defenses are compared: `<arm>+<id>+<id>…`. */
export function routeName(arm: string, defenses: readonly string[]): string {
  return [arm, ...defenses].join("+");
}
