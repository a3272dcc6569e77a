/**
 * Every registered policy must satisfy the same contract. The served clients (openpi, OpenVLA,
 * vla-eval) play it against the in-repo servers of `provael serve-policy` in front of the stub
 * policy, so their wire protocols are part of the contract, not only their own tests; the ONNX
 * policy plays it on the repository's ONNX fixture. No policy is skipped.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Policy, PolicyOptions } from "../../src/core/types.js";
import { policies } from "../../src/policies/index.js";
import {
  type RunningServer,
  SERVE_PROTOCOLS,
  type ServeProtocol,
  startPolicyServer,
} from "../../src/policies/served/server/index.js";
import { stubPolicy } from "../../src/policies/stub.js";
import { suites } from "../../src/suites/index.js";
import { tempDir } from "../support/tmp.js";

/** Client options for a loopback server: fail fast instead of retrying for seconds. */
const FAST = { retries: 1, backoffMs: 10, connectTimeoutMs: 2000, timeoutMs: 5000 };

/**
 * Policies that load a user's file: the contract plays them on the repository's fixtures (an
 * exported ONNX graph and its io map, made by scripts/make-onnx-models.mjs).
 */
function fileOptions(policy: Policy): PolicyOptions | null {
  if (policy.id !== "onnx") return null;
  const ioMap = join(tempDir(), "io-map.yaml");
  writeFileSync(
    ioMap,
    [
      "inputs:",
      "  - { name: state, from: state, indices: [0, 1, 2, 3, 4, 5, 6, 7] }",
      "  - { name: image, from: image, camera: agentview, size: 16, layout: NCHW }",
      "output: { name: action }",
    ].join("\n"),
  );
  return { path: join(FIXTURES, "state-image.onnx"), extra: { ioMap } };
}
const FIXTURES = join(import.meta.dirname, "..", "fixtures", "onnx");

/** The protocol a served client speaks: its id is the protocol `provael serve-policy` serves. */
const protocolOf = (policy: Policy): ServeProtocol | null =>
  (SERVE_PROTOCOLS as readonly string[]).includes(policy.id) ? (policy.id as ServeProtocol) : null;

describe.each(policies.items.map((p) => [p.id, p] as const))("policy %s", (_id, policy) => {
  const protocol = protocolOf(policy);
  let server: RunningServer | null = null;
  beforeAll(async () => {
    if (protocol)
      server = await startPolicyServer({
        policy: stubPolicy,
        protocol,
        host: "127.0.0.1",
        port: 0,
      });
  });
  afterAll(async () => {
    await server?.close();
  });
  const fromFile = fileOptions(policy);
  const options = (): PolicyOptions =>
    server ? { url: server.url, extra: FAST } : (fromFile ?? {});

  it("declares the options it reads, and the ones this test passes are among them", () => {
    // Undeclared, a misspelt --policy-option would run the defaults without a word.
    expect(policy.options).toBeDefined();
    const given = Object.keys(options().extra ?? {});
    expect(given.filter((k) => !policy.options?.includes(k))).toEqual([]);
  });

  it("acts with finite actions of its declared size, deterministically per policy seed", async () => {
    const suite = suites.get(policy.suites[0] ?? "stub");
    const task = suite.tasks()[0];
    if (!task) throw new Error("no task");
    const play = async (p: Policy, o: PolicyOptions) => {
      const inst = await p.load(o);
      const env = await suite.open();
      try {
        expect(inst.capabilities.actionDim).toBe(suite.actionSpace.dim);
        let r = await env.reset({ task: task.id, scene: 0, seed: 0 });
        await inst.reset({ task: task.id, seed: 0, policySeed: 7 });
        const actions: number[][] = [];
        for (let i = 0; i < 5; i++) {
          const { privileged, ...plain } = r.obs;
          const obs = inst.capabilities.privileged && privileged ? { ...plain, privileged } : plain;
          const a = await inst.act(obs);
          expect(a.length).toBe(inst.capabilities.actionDim);
          expect(Array.from(a).every(Number.isFinite)).toBe(true);
          actions.push(Array.from(a));
          r = await env.step(a);
        }
        return actions;
      } finally {
        await env.close();
        await inst.close();
      }
    };
    const first = await play(policy, options());
    expect(await play(policy, options())).toEqual(first);
    // Over the wire, the served stub acts as the stub does in process (float32 on the wire).
    if (protocol) {
      const f32 = (xs: number[][]) => xs.map((a) => a.map((v) => Math.fround(v)));
      expect(f32(first)).toEqual(f32(await play(stubPolicy, {})));
    }
  });

  it("describes itself", () => {
    expect(policy.description.length).toBeGreaterThan(10);
    expect(policy.capabilities.chunk).toBeGreaterThanOrEqual(1);
  });
});
