/**
 * One good request to a served policy through our own clients, for tests that check a server
 * still answers after hostile or stalled peers (served-hostile, served-intake).
 */
import { openpiPolicy } from "../../src/policies/served/openpi.js";
import { openvlaPolicy } from "../../src/policies/served/openvla.js";
import type { ServeProtocol } from "../../src/policies/served/server/index.js";
import { vlaEvalPolicy } from "../../src/policies/served/vla-eval.js";

/** Client options that fail fast: no retry, short timeouts. */
export const FAST = { retries: 0, backoffMs: 10, connectTimeoutMs: 5000, timeoutMs: 10_000 };
/** A stub-shaped observation: one 32x32 camera, an 8-D state, an instruction. */
export const OBS = {
  images: { agentview: { width: 32, height: 32, channels: 3, data: new Uint8Array(32 * 32 * 3) } },
  state: new Float32Array(8),
  instruction: "move to the cup",
};
export const EPISODE = { task: "fetch_cup", seed: 0, policySeed: 1 };

/** One good request through our own client: the server is alive and answers (the action's length). */
export async function goodRequest(protocol: ServeProtocol, url: string): Promise<number> {
  const policy = { openpi: openpiPolicy, openvla: openvlaPolicy, "vla-eval": vlaEvalPolicy }[
    protocol
  ];
  const inst = await policy.load({ url, extra: FAST });
  try {
    await inst.reset(EPISODE);
    return (await inst.act(OBS)).length;
  } finally {
    await inst.close();
  }
}
