/**
 * Every registered policy must satisfy the same contract. The served clients (openpi, OpenVLA,
 * vla-eval) play it against the in-repo servers of `provael serve-policy` in front of the stub
 * policy, so their wire protocols are part of the contract, not only their own tests.
 */
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

/** Client options for a loopback server: fail fast instead of retrying for seconds. */
const FAST = { retries: 1, backoffMs: 10, connectTimeoutMs: 2000, timeoutMs: 5000 };

/** Policies the contract cannot load on its own, each with why and where it is covered. */
const NOT_LOADABLE: Record<string, string> = {
  onnx: "loads a user's exported model and io map (--policy-path); played on the ONNX fixtures by src/policies/onnx.test.ts",
};

/** The protocol a served client speaks: its id is the protocol `provael serve-policy` serves. */
const protocolOf = (policy: Policy): ServeProtocol | null =>
  (SERVE_PROTOCOLS as readonly string[]).includes(policy.id) ? (policy.id as ServeProtocol) : null;

for (const [id, reason] of Object.entries(NOT_LOADABLE)) {
  it.skip(`policy ${id}: skipped: ${reason}`, () => {});
}

describe.each(
  policies.items.filter((p) => NOT_LOADABLE[p.id] === undefined).map((p) => [p.id, p] as const),
)("policy %s", (_id, policy) => {
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
  const options = (): PolicyOptions => (server ? { url: server.url, extra: FAST } : {});

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
