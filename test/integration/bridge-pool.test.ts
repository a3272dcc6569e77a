/**
 * Several upstream servers of one policy behind one bridge (`--policy-url` repeated): the
 * benchmark's connections spread over them, and servers of different models are refused.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  arm,
  bridge,
  closeOpen,
  journalled,
  open,
  Peer,
  recordingUpstream,
} from "../support/bridge.js";

afterEach(closeOpen);

describe("provael bridge over a pool of upstreams", () => {
  it("spreads concurrent benchmark connections over the servers, least loaded first", async () => {
    const a = await recordingUpstream();
    const b = await recordingUpstream();
    open.push(a, b);
    const { b: br } = await bridge("vla-eval", ["none"], {}, a.url, { policyUrls: [a.url, b.url] });
    // Two connections in flight at once: the second goes to the server the first left idle.
    const p1 = await Peer.open(arm(br, "none"));
    const p2 = await Peer.open(arm(br, "none"));
    await p1.hello();
    await p2.hello();
    p1.start("bowl", 0);
    expect((await p1.observe(0.1)).type).toBe("action");
    p2.start("bowl", 1);
    expect((await p2.observe(0.1)).type).toBe("action");
    p1.end(false);
    p2.end(false);
    p1.close();
    p2.close();
    await journalled(br, 2);
    expect(a.observations).toHaveLength(1);
    expect(b.observations).toHaveLength(1);
  });

  it("refuses upstreams that serve different models, before listening", async () => {
    const a = await recordingUpstream();
    const other = await recordingUpstream(1, { model_server: "another" });
    open.push(a, other);
    await expect(
      bridge("vla-eval", ["none"], {}, a.url, { policyUrls: [a.url, other.url] }),
    ).rejects.toMatchObject({
      code: "config/invalid",
      message: expect.stringMatching(/different models/),
    });
  });
});
