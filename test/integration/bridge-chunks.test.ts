/**
 * Chunked upstreams: the bridge counts the observations it forwarded and those that reached the
 * model, per episode and in the report, where the upstream's client can tell (a served policy
 * whose answers are action chunks it executes open loop).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  arm,
  bridge,
  closeOpen,
  journalled,
  playEpisode,
  recordingUpstream,
  records,
} from "../support/bridge.js";

afterEach(closeOpen);

describe("provael bridge in front of a chunked upstream", () => {
  it("counts steps forwarded and steps the model used, per episode and in the report", async () => {
    // Chunks of 4, executed whole (--replan 4): the model sees observations 0 and 4 of 8.
    const up = await recordingUpstream(4);
    const { b, out } = await bridge("vla-eval", ["none"], { replan: 4 }, up.url);
    await playEpisode(arm(b, "none"), { steps: 8 });
    await journalled(b, 1);
    const result = await b.close();
    expect(up.observations).toHaveLength(2);
    expect(records(out)[0]?.bridge).toMatchObject({ steps_forwarded: 8, steps_used: 2, chunk: 4 });
    expect(result.report.run.bridge).toMatchObject({ steps_forwarded: 8, steps_used: 2 });
    const md = readFileSync(join(out, "report.md"), "utf8");
    expect(md).toContain("Steps: 8 forwarded to the upstream; 2 reached its model");
  });

  it("every step reaches a model that replans each step; an in-process policy cannot tell", async () => {
    const up = await recordingUpstream(4);
    const served = await bridge("vla-eval", ["none"], { replan: 1 }, up.url);
    await playEpisode(arm(served.b, "none"), { steps: 3 });
    await journalled(served.b, 1);
    await served.b.close();
    expect(records(served.out)[0]?.bridge).toMatchObject({
      steps_forwarded: 3,
      steps_used: 3,
      chunk: 4,
    });

    const local = await bridge("stub", ["none"]);
    await playEpisode(arm(local.b, "none"), { steps: 2 });
    await journalled(local.b, 1);
    const result = await local.b.close();
    expect(records(local.out)[0]?.bridge).toMatchObject({ steps_forwarded: 2, steps_used: null });
    expect(result.report.run.bridge).toMatchObject({ steps_forwarded: 2, steps_used: null });
  });
});
