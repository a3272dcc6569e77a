/**
 * Served policies answer side-effect-free queries (search attacks): a query reaches the server
 * but leaves the played episode alone: its chunk queue, its connection, its count of model calls.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Observation, Policy } from "../../src/core/types.js";
import { openpiPolicy } from "../../src/policies/served/openpi.js";
import { openvlaPolicy } from "../../src/policies/served/openvla.js";
import {
  type RunningServer,
  type ServeProtocol,
  startPolicyServer,
} from "../../src/policies/served/server/index.js";
import { vlaEvalPolicy } from "../../src/policies/served/vla-eval.js";
import { stubPolicy } from "../../src/policies/stub.js";

const FAST = { retries: 1, backoffMs: 10, connectTimeoutMs: 2000, timeoutMs: 5000 };
const servers: RunningServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const obs: Observation = {
  images: {
    agentview: { width: 8, height: 8, channels: 3, data: new Uint8Array(8 * 8 * 3).fill(9) },
  },
  state: new Float32Array(8),
  instruction: "pick up the black bowl",
};

const cases: [ServeProtocol, Policy][] = [
  ["openpi", openpiPolicy],
  ["openvla", openvlaPolicy],
  ["vla-eval", vlaEvalPolicy],
];

describe("served policies answer queries", () => {
  it.each(cases)(
    "%s: a query is a prediction that leaves the episode alone",
    async (protocol, policy) => {
      const server = await startPolicyServer({
        policy: stubPolicy,
        protocol,
        host: "127.0.0.1",
        port: 0,
      });
      servers.push(server);
      const inst = await policy.load({ url: server.url, extra: { ...FAST } });
      try {
        expect(typeof inst.query).toBe("function");
        await inst.reset({ task: "t", seed: 0, policySeed: 1 });
        const first = await inst.act(obs);
        const before = inst.modelCalls?.();
        const q = await inst.query?.({ ...obs, instruction: "pick up the plate" });
        expect(Array.from(q ?? []).every(Number.isFinite)).toBe(true);
        expect(q).toHaveLength(first.length);
        // The query is not a step: the model-call count is the episode's alone.
        expect(inst.modelCalls?.()).toEqual(before);
        expect(await inst.act(obs)).toHaveLength(first.length);
      } finally {
        await inst.close();
      }
    },
  );
});
